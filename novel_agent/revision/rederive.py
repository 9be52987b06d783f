"""Memory as a function of the scenes and their recorded extractions.

Every plan record (`plans/plan_NNN.yaml`) holds what its tick did to memory: the
planner's tool calls and cast (`cast_named`: the names the tools saw, when memory
names them otherwise), the extractor's answer with the continuity audit's keys
(`extraction`; `extraction_fallback` when it could not be used), and, for an
imported piece, where it came from. A replay runs the tick's own steps
(tick/scene_memory.py) again with them and with the scene's prose, which the
extraction is checked against: the tools, the extraction, what the audit records
(status, places, objects, witnesses) and the story's clock, then the loops' payoffs
and status as the tick settled them (`payoffs`: story/outline/payoffs.py). So memory after tick k
is the replay of records 1..k over the memory before tick 1, and between ticks it
is put in the order the files are read back in, as each tick read it.

Edits of memory by hand are in no record: a re-derivation starts from an entry of
the history that holds them, and a revision lays what it changes over the files
(revision/merge.py), so the edits made after it stand too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from novel_agent.audit.clock import Clock, clock_file, clock_from
from novel_agent.books.importer import create_cast
from novel_agent.config.settings import Config
from novel_agent.errors import FileFormatError
from novel_agent.files import read_yaml
from novel_agent.story.decisions import (
    Extraction,
    knowledge_from_json,
    plan_as_named,
    plan_from_record,
    voices_from_json,
)
from novel_agent.story.memory.read import as_read
from novel_agent.story.memory.store import Memory
from novel_agent.story.outline.payoffs import apply_settled
from novel_agent.story.project.folder import Project, Story
from novel_agent.story.scenes import load_scene
from novel_agent.tick.scene_memory import extraction_step, knowledge_step, name_check, plan_step


@dataclass
class Derived:
    """Memory and the story's clock as of some tick (the clock: None when none is stated,
    with the scene that set it)."""

    memory: Memory
    clock: Clock | None = None
    clock_scene: int = 0

    def copy(self) -> Derived:
        return Derived(self.memory.copy(), self.clock, self.clock_scene)

    def clock_text(self) -> str:
        """memory/clock.yaml's text ("" when no clock is stated)."""
        return clock_file(self.clock, self.clock_scene) if self.clock is not None else ""


def clock_of(data: Any) -> tuple[Clock | None, int]:
    """The clock memory/clock.yaml's parsed `data` holds, and the scene that set it."""
    scene = data.get("scene") if isinstance(data, dict) else 0
    return clock_from(data), scene if isinstance(scene, int) else 0


def extraction_of(record: Mapping[str, Any]) -> Extraction | None:
    """The extraction a record applied to memory (the audit's keys included), or None
    when it applied none."""
    data = record.get("extraction")
    if not isinstance(data, dict) or record.get("extraction_fallback"):
        return None
    return Extraction(summary=list(data.get("summary") or []), facts=list(data.get("facts") or []),
                      characters=list(data.get("characters") or []),
                      loops_opened=list(data.get("loops_opened") or []),
                      loops_resolved=list(data.get("loops_resolved") or []),
                      relationships=list(data.get("relationships") or []),
                      **knowledge_from_json(data), voices=voices_from_json(data))


def extracted(record: Mapping[str, Any]) -> bool:
    """Whether the extractor was asked for this tick (its answer used or not): an imported
    piece landed without extraction was not, and its audit never ran."""
    return isinstance(record.get("extraction"), dict)


def read_record(project: Project, tick: int) -> dict[str, Any]:
    """Tick `tick`'s plan record (a FileFormatError naming the file when it is no record)."""
    path = project.plan_path(tick)
    record = read_yaml(path, None)
    if not isinstance(record, dict):
        raise FileFormatError("not a plan record (a mapping with the tick's plan and "
                              "extraction)", file=str(path))
    return record


def before_extraction(memory: Memory, record: Mapping[str, Any], *, story: Story) -> list[str]:
    """What tick `record` did to memory before its extractor was asked: the planner's
    tools, then the cast made sure of (an imported piece: nothing); the tools' lines."""
    if record.get("imported"):
        return []
    plan = plan_as_named(record)
    return plan_step(memory, plan, int(record["tick"]), len(plan.tool_calls), name_check(story))


def apply_extraction(derived: Derived, record: Mapping[str, Any], extraction: Extraction | None,
                     *, story: Story, config: Config, body: str) -> list[str]:
    """What the extraction did, as the tick did it: an imported piece first introduces who
    it names, then the extraction is applied (checked against `body`, the scene's prose),
    then what the audit records and the clock; what changed, one line each (the record's
    `memory_changes` of a tick that landed so)."""
    tick, gen, changes = int(record["tick"]), config.generation, []
    memory = derived.memory
    if extraction is not None:
        if record.get("imported") and gen.enable_entity_updates:
            changes += create_cast(memory, extraction, body, tick, name_check(story))
        changes += extraction_step(memory, extraction, tick=tick, prose=body, generation=gen)
    if extracted(record) and gen.enable_entity_updates:
        known, after = knowledge_step(memory, extraction or Extraction(summary=[]),
                                      plan_from_record(record), tick,
                                      (derived.clock, derived.clock_scene), body)
        changes += known
        if after is not None:
            derived.clock, derived.clock_scene = after
    return changes + apply_settled(memory.loops, record.get("payoffs"))


def replay(derived: Derived, record: Mapping[str, Any], *, story: Story, config: Config,
           body: str, extraction: Extraction | None = None, given: bool = False) -> list[str]:
    """Apply one tick's record to `derived` (in place) as its tick did, then put memory
    in the order it is read back in; what the extraction changed. `given`: apply
    `extraction` instead of the record's."""
    before_extraction(derived.memory, record, story=story)
    changes = apply_extraction(derived, record, extraction if given else extraction_of(record),
                               story=story, config=config, body=body)
    as_read(derived.memory)
    return changes


def derive_range(project: Project, derived: Derived, first: int, last: int,
                 config: Config) -> Derived:
    """`derived` (as of before tick `first`) with ticks first..last replayed, a copy."""
    story = project.story()
    derived = derived.copy()
    for tick in range(first, last + 1):
        replay(derived, read_record(project, tick), story=story, config=config,
               body=load_scene(project.scene_path(tick)).body)
    return derived


def replay_range(project: Project, memory: Memory, first: int, last: int,
                 config: Config) -> Memory:
    """`memory` (the memory before tick `first`) with ticks first..last replayed."""
    return derive_range(project, Derived(memory), first, last, config).memory
