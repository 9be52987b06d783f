"""Memory as a function of the scenes and their recorded extractions.

Every plan record (`plans/plan_NNN.yaml`) holds what its tick did to memory:
the planner's tool calls (run as they were, then the cast made sure of) and the
extractor's answer (`extraction`; none, or `extraction_fallback`, when it added
nothing); an imported piece instead introduces who its extraction names. So
memory after tick k is `replay` of records 1..k over the memory before tick 1,
and revising scene N re-derives the memory of every later tick from the memory
before N. Edits of memory by hand are not in any record: a re-derivation starts
from an entry of the history that holds them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from novel_agent.config import Config
from novel_agent.decisions import Extraction, Plan, ToolCall
from novel_agent.errors import FileFormatError
from novel_agent.files import read_yaml
from novel_agent.importer import create_cast
from novel_agent.memory import Memory
from novel_agent.names import name_problem
from novel_agent.project import Project, Story
from novel_agent.scenes import load_scene
from novel_agent.stages import extract
from novel_agent.stages.tools import ensure_cast, run_tools


def plan_of(record: Mapping[str, Any]) -> Plan:
    """The Plan a record holds."""
    calls = [ToolCall(**{k: str(c.get(k) or "") for k in ("tool", "name", "target", "detail")})
             for c in record.get("tool_calls") or [] if isinstance(c, dict)]
    return Plan(intention=str(record.get("intention") or ""), pov=str(record.get("pov") or ""),
                location=str(record.get("location") or ""), title=str(record.get("title") or ""),
                characters=[str(c) for c in record.get("characters") or []], tool_calls=calls)


def extraction_of(record: Mapping[str, Any]) -> Extraction | None:
    """The extraction a record applied to memory, or None when it applied none."""
    data = record.get("extraction")
    if not isinstance(data, dict) or record.get("extraction_fallback"):
        return None
    return Extraction(summary=list(data.get("summary") or []), facts=list(data.get("facts") or []),
                      characters=list(data.get("characters") or []),
                      loops_opened=list(data.get("loops_opened") or []),
                      loops_resolved=list(data.get("loops_resolved") or []),
                      relationships=list(data.get("relationships") or []))


def read_record(project: Project, tick: int) -> dict[str, Any]:
    """Tick `tick`'s plan record (a FileFormatError naming the file when it is no record)."""
    path = project.plan_path(tick)
    record = read_yaml(path, None)
    if not isinstance(record, dict):
        raise FileFormatError("not a plan record (a mapping with the tick's plan and "
                              "extraction)", file=str(path))
    return record


def replay(memory: Memory, record: Mapping[str, Any], *, story: Story, config: Config,
           body: str = "", extraction: Extraction | None = None) -> list[str]:
    """Apply one tick's record to `memory` (in place) as its tick did: the tools and the
    cast, or an imported piece's introductions, then the extraction (`extraction`
    replaces the recorded one). Returns what changed, one line each."""
    tick, gen = int(record["tick"]), config.generation
    check = lambda name: name_problem(name, title=story.title or story.name,  # noqa: E731
                                      premise=story.premise)
    extraction = extraction if extraction is not None else extraction_of(record)
    plan, changes = plan_of(record), []
    if record.get("imported"):
        if extraction is not None and gen.enable_entity_updates:
            changes += create_cast(memory, extraction, body, tick, check)
    else:
        run_tools(memory, plan.tool_calls, tick, len(plan.tool_calls), check)
        ensure_cast(memory, plan, tick, check)
    if extraction is not None:
        changes += extract.apply(memory, extraction, tick=tick, facts=gen.enable_fact_extraction,
                                 entities=gen.enable_entity_updates)
    return changes


def replay_range(project: Project, memory: Memory, first: int, last: int,
                 config: Config) -> Memory:
    """`memory` (the memory before tick `first`) with ticks first..last replayed."""
    story = project.story()
    memory = memory.copy()
    for tick in range(first, last + 1):
        record = read_record(project, tick)
        body = load_scene(project.scene_path(tick)).body if record.get("imported") else ""
        replay(memory, record, story=story, config=config, body=body)
    return memory


def scene_body(path: Path) -> str:
    """A scene file's prose."""
    return load_scene(path).body
