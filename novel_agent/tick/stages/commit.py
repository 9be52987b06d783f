"""Stage 4, commit: the scene, its plan, memory and the tick counter land together.

The tick's `step` settles the loops' payoffs (a book with an outline), makes the scene
file, the plan record (`plan_record`), state.yaml (`tick_state`) and the prompt logs,
and writes them in one transaction (`commit_tick`); a failed try's kept prose and a
held tick it passed are then removed.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from novel_agent.audit.clock import CLOCK_FILE
from novel_agent.audit.held import HELD_FILE
from novel_agent.files import dump_yaml
from novel_agent.story.memory.files import stage_memory
from novel_agent.story.memory.store import Memory
from novel_agent.story.name_pool import POOL_FILE
from novel_agent.story.outline.standing import scene_shape
from novel_agent.story.project.folder import Project
from novel_agent.story.project.journal import Cut
from novel_agent.story.scenes import Scene, word_count
from novel_agent.tick import payoff_step
from novel_agent.tick.draft import TickContext, TickDraft
from novel_agent.tick.prompt_log import log_path, log_text, tidied_logs


def commit_tick(project: Project, scene: Scene, plan_record: dict[str, Any], memory: Memory,
                before: Memory, state: dict[str, Any], extra: dict[Path, Any] | None = None) -> list[Path]:
    """Write everything a tick produced in one transaction (all or nothing): only what
    changed, so a commit costs the same at tick 10 and tick 10,000 (story/memory/files.stage_memory).

    The scene and plan files must be new: one already there (a file the user moved in,
    a counter gone stale) stops the commit with an OverwriteError naming it.

    `extra` maps further paths to texts (context reports) that land with the tick, to
    a Cut (a prompt log that loses its messages), or to None: a file the tick removes
    (a prompt log past context.prompt_log_ticks).
    Returns the files written or removed (for the index: what it must look at again).
    """
    txn = project.transaction()
    txn.stage(project.scene_path(scene.tick), scene.render(), new=True)
    txn.stage(project.plan_path(scene.tick), dump_yaml(plan_record), new=True)
    stage_memory(txn, memory, project.memory_dir, before)
    for path, text in (extra or {}).items():
        if text is None:
            txn.remove(path)
        elif isinstance(text, Cut):
            txn.cut(path, text)
        else:
            txn.stage(path, text)
    project.stage_state(txn, state)
    txn.commit()
    return list(txn.ops)


def step(ctx: TickContext, d: TickDraft) -> TickDraft:
    """The draft committed: the loops' payoffs settled, then the scene, its plan record,
    memory, the tier state and the prompt logs landed together (`scene` and `written`
    say what landed)."""
    project, plan, extraction = ctx.project, d.planned, d.extracted
    payoffs, lines = payoff_step.settle_step(d.memory, plan, d.standing, d.tick)
    d = replace(d, payoffs=payoffs, changes=d.changes + tuple(lines))
    scene = Scene(tick=d.tick, body=d.prose, title=plan.title or f"Scene {d.tick}",
                  pov=plan.pov, location=plan.location, characters=list(plan.characters),
                  summary=list(extraction.summary), words=word_count(d.prose),
                  tokens=ctx.session.counter.count(d.prose),
                  **scene_shape(d.standing, plan.beat, extraction.beat_status,
                                extraction.tension, extraction.tension_reason))
    record, state = plan_record(d), tick_state(project.state(), d)
    config = ctx.config
    logs: dict[Path, Any] = tidied_logs(project, d.tick, keep=config.context.keep_prompt_logs,
                                        kept_at_all=config.context.prompt_log_ticks,
                                        every=config.generation.checkpoint_summary_interval)
    logs.update({log_path(project, d.tick, stage): log_text(b.report, b.messages)
                 for stage, b in d.built.items()})
    if d.clock_text:
        logs[project.memory_dir / CLOCK_FILE] = d.clock_text
    if d.pool_text:
        logs[project.root / POOL_FILE] = d.pool_text
    written = commit_tick(project, scene, record, d.memory, d.start.before, state, extra=logs)
    draft_path(project, d.tick).unlink(missing_ok=True)   # a failed try's prose, now landed
    (project.novel_dir / HELD_FILE).unlink(missing_ok=True)   # a held tick, now passed
    return replace(d, scene=scene, written=tuple(written))


def plan_record(d: TickDraft) -> dict[str, Any]:
    """plans/plan_NNN.yaml: what the planner decided, the tools' results, what the
    extractor found and changed (and, for a given scene, where it came from)."""
    record = {"tick": d.tick, **d.planned.to_dict(), "tool_results": list(d.tool_results),
              "warnings": list(d.warnings)}
    if d.cast_named:
        record["cast_named"] = dict(d.cast_named)
    if d.fallback:
        record["extraction_fallback"] = d.fallback
    record |= {"extraction": d.extracted.to_dict(), "memory_changes": list(d.changes)}
    if d.payoffs:
        record["payoffs"] = {key: dict(value) for key, value in d.payoffs.items()}
    if d.audit and d.audit.mode != "off":
        record["audit"] = d.audit.record()
    prose = d.checked.record() if d.checked else {}
    if prose or d.rewritten or d.mended:
        record["prose"] = prose | ({"rewritten": d.rewritten} if d.rewritten else {}) \
            | ({"mended": d.mended} if d.mended else {}) \
            | ({"mends": [{"before": b, "after": a} for b, a in d.mends]} if d.mends else {})
    record |= {"answers": dict(d.answers)} if d.answers else {}
    return record | (dict(d.given.record) if d.given else {})


def tick_state(before: dict[str, Any], d: TickDraft) -> dict[str, Any]:
    """state.yaml after the tick: the counter, the note's mark, the writer's tier bounds
    (none: the next tick's tiers start afresh), the recall history."""
    writer = d.built.get("writer")
    state = {**before, "tick": d.tick}
    mark = dict(d.start.steer_mark) if d.start.steer_mark is not None else None
    for key, value in (("steer", mark), ("writer_tiers", writer.state if writer else None)):
        if value is None:
            state.pop(key, None)
        else:
            state[key] = value
    state["recall"] = recall_history(before, d.tick, writer.report.get("recall") if writer else None)
    return state | (dict(d.given.state) if d.given else {})


RECALL_KEPT = 20     # ticks of the recall probe kept in state.yaml for `novel status`


def recall_history(state: dict[str, Any], tick: int, recall: dict[str, Any] | None) -> list[list[int]]:
    """The last RECALL_KEPT ticks' [tick, relevant facts, reached], this one added."""
    kept = [row for row in state.get("recall") or [] if isinstance(row, list) and len(row) == 3
            and row[0] < tick]
    if recall is not None:
        kept.append([tick, recall["relevant"], recall["reached"]])
    return kept[-RECALL_KEPT:]


def draft_path(project: Project, tick: int) -> Path:
    """Where a failed tick keeps its prose."""
    return project.drafts_dir / f"draft_{tick:03d}.md"
