"""One tick: plan -> tools -> write -> extract -> commit. Prints nothing.

`run_tick` reads the project's files, calls the model for each stage, and
commits the scene, plan, memory and tick counter in one transaction. If any
stage fails, nothing is committed; the writer's draft (if there is one) is
kept under `.novel/drafts/`, and TickError says which stage failed.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

from .decisions import Extraction, Plan
from .config import Config
from .context.writer import Piece
from .prompt_log import log_path, log_text
from .scenes import SceneReader
from .stage_prompts import Built, build_extractor, build_planner, build_writer
from .errors import ModelError, TickError
from .files import atomic_write
from .memory import load_memory
from .models import model_id
from .models.base import ChatModel
from .tokens import TokenCounter
from .project import Project
from .scenes import Scene, word_count
from .summaries import tier3_selector
from .stages import extract, plan as plan_stage, write
from .stages import summarize
from .models.ask import StageCall
from .stages.commit import commit_tick
from .stages.tools import ensure_cast, run_tools


@dataclass
class StageReport:
    """How one stage went, for progress lines."""

    stage: str
    seconds: float
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    calls: int = 1


@dataclass
class TickResult:
    """What a committed tick produced."""

    tick: int
    scene_path: Path
    plan_path: Path
    title: str
    words: int
    plan: Plan
    extraction: Extraction
    tool_results: list[str]
    memory_changes: list[str]
    stages: list[StageReport] = field(default_factory=list)
    summary: summarize.SummaryReport | None = None   # checkpoints made after the commit
    reports: dict[str, dict] = field(default_factory=dict)


def _report(call: StageCall, seconds: float) -> StageReport:
    return StageReport(call.stage, seconds, call.prompt_tokens, call.completion_tokens,
                       call.cached_tokens, len(call.completions))


def run_tick(project: Project, config: Config, model: ChatModel, *,
             counter: TokenCounter | None = None,
             clock: Callable[[], float] = time.monotonic,
             now: Callable[[], datetime] = lambda: datetime.now(timezone.utc),
             on_stage: Callable[[StageReport], None] | None = None) -> TickResult:
    """Run one tick on `project`. The caller holds the project's lock."""
    gen = config.generation
    story = project.story()
    memory = load_memory(project.memory_dir)
    before = memory.copy()
    tick = project.tick() + 1
    scenes = SceneReader(project.scenes_dir)
    counter = counter or TokenCounter(model_id(config), config.context.encoding)
    steer = project.steer()
    select, overall = tier3_selector(project, config, counter.count)
    tier3 = lambda budget: [Piece(d.name, d.block()) for d in select(budget)]  # noqa: E731
    reports: list[StageReport] = []
    built: dict[str, Built] = {}

    def emit(report: StageReport | summarize.SummaryReport) -> None:
        reports.append(report)
        if on_stage:
            on_stage(report)

    def stage_done(call: StageCall, started: float) -> None:
        emit(_report(call, clock() - started))

    hints = {"story": story, "memory": memory, "tick": tick,
             "min_words": gen.scene_min_words, "max_words": gen.scene_max_words}
    # 1. plan (the prompt is built, and fits, before any model is called)
    started = clock()
    built["planner"] = build_planner(project, config, counter, story=story, memory=memory,
                                     tick=tick, scenes=scenes, overall=overall, steer=steer)
    plan, call = _stage("planner", lambda: plan_stage.run(
        model, built["planner"].messages, max_tokens=config.max_tokens("planner"),
        max_tools=gen.max_tools_per_tick, hints=hints))
    tool_results = run_tools(memory, plan.tool_calls, tick, gen.max_tools_per_tick)
    tool_results += ensure_cast(memory, plan, tick)
    stage_done(call, started)
    # 2. write
    started = clock()
    built["writer"] = build_writer(project, config, counter, story=story, memory=memory,
                                   plan=plan, tick=tick, scenes=scenes,
                                   tool_results=tool_results, steer=steer, tier3=tier3)
    hints = {**hints, "plan": plan}
    prose, call = _stage("writer", lambda: write.run(
        model, built["writer"].messages, max_tokens=config.max_tokens("writer"), hints=hints))
    stage_done(call, started)
    # 3. extract
    started = clock()
    built["extractor"] = build_extractor(project, config, counter, story=story, memory=memory,
                                         plan=plan, prose=prose, tick=tick)
    hints = {**hints, "prose": prose}
    try:
        extraction, call = extract.run(model, built["extractor"].messages,
                                       max_tokens=config.max_tokens("extractor"), hints=hints)
    except ModelError as exc:
        draft = project.drafts_dir / f"draft_{tick:03d}.md"
        atomic_write(draft, prose + "\n")
        raise TickError(f"tick {tick} failed in extract: {exc}; the draft prose is kept in "
                        f"{draft}", stage="extractor", draft_path=str(draft)) from None
    changes = extract.apply(memory, extraction, tick=tick, facts=gen.enable_fact_extraction,
                            entities=gen.enable_entity_updates)
    stage_done(call, started)
    # 4. commit
    started = clock()
    scene = Scene(tick=tick, body=prose, title=plan.title or f"Scene {tick}", pov=plan.pov,
                  location=plan.location, characters=list(plan.characters),
                  summary=list(extraction.summary), words=word_count(prose),
                  tokens=counter.count(prose))
    plan_record = {"tick": tick, **plan.to_dict(), "tool_results": tool_results,
                   "extraction": extraction.to_dict(), "memory_changes": changes}
    state = {**project.state(), "tick": tick, "writer_tiers": built["writer"].state}
    logs = {log_path(project, tick, stage): log_text(b) for stage, b in built.items()}
    commit_tick(project, scene, plan_record, memory, before, state, extra=logs)
    emit(StageReport("commit", clock() - started, calls=0))
    # 5. checkpoint summaries: a failure leaves them pending, the tick stays committed
    started = clock()
    summary = summarize.after_commit(project, config, model, tick, now=now, memory=memory,
                                     counter=counter)
    if summary is not None:
        summary.seconds = clock() - started
        emit(summary)
    return TickResult(tick=tick, scene_path=project.scene_path(tick),
                      plan_path=project.plan_path(tick), title=scene.title, words=scene.words,
                      plan=plan, extraction=extraction, tool_results=tool_results,
                      memory_changes=changes, stages=reports, summary=summary,
                      reports={stage: b.report for stage, b in built.items()})


def _stage(name: str, fn):
    """Run a stage; a model failure becomes a TickError naming the stage."""
    try:
        return fn()
    except ModelError as exc:
        raise TickError(f"{name} failed: {exc}", stage=name) from None

