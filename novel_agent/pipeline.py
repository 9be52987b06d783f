"""The tick's one sequence: plan -> write -> extract -> commit -> summarize. Prints nothing.

Every command that runs any of it goes through here with a Session:
`tick(session)` (`novel tick`, and the coming `novel run` and `novel import`)
runs the whole sequence; `preview(session, stage)` (`novel context`) runs the
same steps up to building `stage`'s prompt, with the session's stand-in
model answering the stages before it.

Each step builds its stage's prompt (fitted by the context engine), asks the
model, and applies the answer to the tick's draft. If a stage fails nothing
is committed; prose already written is kept under `.novel/drafts/`, and the
TickError says which stage failed and carries the model's error as its cause.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from . import crashpoints
from .decisions import Extraction, Plan
from .context.writer import Piece
from .errors import CommittedError, ModelError, ModelResponseError, NovelError, TickError
from .files import atomic_write
from .memory import Memory, load_memory
from .models.ask import StageCall
from .names import name_problem
from .project import Story
from .prompts import check_templates
from .prompt_log import log_path, log_text, stripped_logs
from .scenes import Scene, SceneReader, word_count
from .session import Session
from .storage import explain
from .stage_prompts import Built, build_extractor, build_planner, build_writer
from .stages import extract, plan as plan_stage, summarize, write
from .stages.commit import commit_tick
from .stages.tools import REJECTED, ensure_cast, run_tools
from .steer import read_steer
from .summaries import SummaryTree, load_tree, planner_overall, select_tier3


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
class TickDraft:
    """One tick in progress: what it read, and what each stage has made so far."""

    tick: int
    story: Story
    memory: Memory
    before: Memory
    steer: str                       # the author's note, "" when none is in force
    scenes: SceneReader
    tree: SummaryTree
    steer_mark: dict | None = None   # what state.yaml keeps of a `ticks:` note
    plan: Plan | None = None
    tool_results: list[str] = field(default_factory=list)
    prose: str = ""
    extraction: Extraction | None = None
    changes: list[str] = field(default_factory=list)
    built: dict[str, Built] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    fallback: str = ""               # why the summary came from the prose, if it did


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
    warnings: list[str] = field(default_factory=list)  # names rejected, ...
    notices: list[str] = field(default_factory=list)   # recovery done, warnings: one line each


OnStage = Callable[[Any], None]


# -- the steps ---------------------------------------------------------------------


def begin(session: Session) -> TickDraft:
    """Read what the next tick starts from, and point the session at it."""
    project = session.project
    check_templates(project.templates_dir)   # a broken template fails before any call
    memory = load_memory(project.memory_dir)
    tick_no, state, note = project.tick() + 1, project.state(), read_steer(project.steer_file)
    draft = TickDraft(tick=tick_no, story=project.story(), memory=memory,
                      before=memory.copy(),
                      steer=note.text if note.active(tick_no, state) else "",
                      scenes=SceneReader(project.scenes_dir),
                      tree=load_tree(project.summaries_dir, session.docs),
                      steer_mark=note.mark(tick_no, state),
                      notices=list(project.notices))
    project.notices.clear()
    session.at_tick(draft.tick)
    session.source.story, session.source.memory = draft.story, draft.memory
    session.source.steer = draft.steer
    session.source.plan, session.source.prose, session.source.summary = None, "", None
    return draft


def _build_plan(session: Session, d: TickDraft) -> Built:
    return build_planner(session, story=d.story, memory=d.memory, tick=d.tick, scenes=d.scenes,
                         overall=planner_overall(d.tree, session.config), steer=d.steer)


def _plan(session: Session, d: TickDraft) -> StageCall:
    gen = session.config.generation
    d.plan, call = plan_stage.run(session.model, d.built["planner"].messages,
                                  max_tokens=session.config.max_tokens("planner"),
                                  max_tools=gen.max_tools_per_tick)
    check = lambda name: name_problem(name, title=d.story.title or d.story.name,  # noqa: E731
                                      premise=d.story.premise)
    last = d.scenes(d.tick - 1)
    d.plan = plan_stage.name_heads(d.plan, check)
    d.plan, warning = plan_stage.settle_pov(d.plan, check, [last.pov if last else "",
                                                            d.story.protagonist.split(",")[0]])
    d.warnings += [warning] if warning else []
    lines = run_tools(d.memory, d.plan.tool_calls, d.tick, gen.max_tools_per_tick, check)
    lines += ensure_cast(d.memory, d.plan, d.tick, check)
    d.tool_results = [line for line in lines if not line.startswith(REJECTED)]
    d.warnings += [line for line in lines if line.startswith(REJECTED)]
    session.source.plan = d.plan
    return call


def _build_write(session: Session, d: TickDraft) -> Built:
    tree = d.tree
    tier3 = lambda budget: [Piece(doc.name, doc.block())  # noqa: E731
                            for doc in select_tier3(tree, budget, session.counter.count)]
    return build_writer(session, story=d.story, memory=d.memory, plan=d.plan, tick=d.tick,
                        scenes=d.scenes, tool_results=d.tool_results, steer=d.steer,
                        tier3=tier3)


def _write(session: Session, d: TickDraft) -> StageCall:
    d.prose, call = write.run(session.model, d.built["writer"].messages,
                              max_tokens=session.config.max_tokens("writer"),
                              min_words=session.config.generation.scene_min_words,
                              max_words=session.config.generation.scene_max_words,
                              title=d.plan.title)
    session.source.prose = d.prose
    least, words = session.config.generation.scene_min_words, word_count(d.prose)
    if words < least:
        d.notices.append(f"scene {d.tick} has {words} words, under "
                         f"generation.scene_min_words ({least})")
    return call


def _build_extract(session: Session, d: TickDraft) -> Built:
    return build_extractor(session, story=d.story, memory=d.memory, plan=d.plan, prose=d.prose,
                           tick=d.tick)


def _extract(session: Session, d: TickDraft) -> StageCall:
    gen = session.config.generation
    try:
        d.extraction, call = extract.run(session.model, d.built["extractor"].messages,
                                         max_tokens=session.config.max_tokens("extractor"))
    except ModelResponseError as exc:     # answered, twice, but nothing usable: the scene
        if not isinstance(exc.call, StageCall):   # still lands, summed up by its own words
            raise
        d.extraction, d.fallback = extract.from_prose(d.prose), str(exc)
        d.notices.append(f"the extractor's answer could not be used ({exc}); the scene's own "
                         "sentences stand as its summary; nothing of the scene is added to memory")
        return exc.call
    d.changes = extract.apply(d.memory, d.extraction, tick=d.tick,
                              facts=gen.enable_fact_extraction,
                              entities=gen.enable_entity_updates)
    return call


@dataclass(frozen=True)
class Step:
    """One model stage of the tick: build its prompt, then ask and apply the answer."""

    stage: str
    build: Callable[[Session, TickDraft], Built]
    answer: Callable[[Session, TickDraft], StageCall]


STAGE_VERBS = {"planner": "plan", "writer": "write", "extractor": "extract"}
STEPS = (Step("planner", _build_plan, _plan), Step("writer", _build_write, _write),
         Step("extractor", _build_extract, _extract))


def run_steps(session: Session, draft: TickDraft, *, until: str | None = None,
              on_stage: OnStage | None = None) -> None:
    """Run the model stages in order; with `until`, stop once that stage's prompt is built."""
    for step in STEPS:
        started = session.clock()
        draft.built[step.stage] = step.build(session, draft)
        if step.stage == until:
            return
        call = _answer(session, draft, step)
        crashpoints.hit(f"after_{STAGE_VERBS[step.stage]}")
        if on_stage:
            on_stage(StageReport(step.stage, session.clock() - started, call.prompt_tokens,
                                 call.completion_tokens, call.cached_tokens,
                                 len(call.completions)))


def _answer(session: Session, draft: TickDraft, step: Step) -> StageCall:
    """Ask the model for `step`; a model failure becomes a TickError, prose kept."""
    try:
        call = step.answer(session, draft)
        if call.warning:
            draft.notices.append(call.warning)
        return call
    except ModelError as exc:
        kept = ""
        if draft.prose:
            path = draft_path(session.project, draft.tick)
            atomic_write(path, draft.prose + "\n")
            kept = str(path)
        raise TickError(f"tick {draft.tick} failed in {step.stage}: {exc}"
                        + (f"; the draft prose is kept in {kept}" if kept else ""),
                        stage=step.stage, draft_path=kept or None) from exc


def commit(session: Session, draft: TickDraft) -> Scene:
    """Land the scene, its plan, memory, the tier state and the prompt logs together."""
    plan, extraction, project = draft.plan, draft.extraction, session.project
    scene = Scene(tick=draft.tick, body=draft.prose, title=plan.title or f"Scene {draft.tick}",
                  pov=plan.pov, location=plan.location, characters=list(plan.characters),
                  summary=list(extraction.summary), words=word_count(draft.prose),
                  tokens=session.counter.count(draft.prose))
    record = {"tick": draft.tick, **plan.to_dict(), "tool_results": draft.tool_results,
              "warnings": draft.warnings,
              **({"extraction_fallback": draft.fallback} if draft.fallback else {}),
              "extraction": extraction.to_dict(), "memory_changes": draft.changes}
    state = {**project.state(), "tick": draft.tick, "writer_tiers": draft.built["writer"].state,
             "steer": draft.steer_mark}
    if draft.steer_mark is None:
        del state["steer"]
    logs = stripped_logs(project, draft.tick - session.config.context.keep_prompt_logs)
    logs.update({log_path(project, draft.tick, stage): log_text(b)
                 for stage, b in draft.built.items()})
    commit_tick(project, scene, record, draft.memory, draft.before, state, extra=logs)
    draft_path(project, draft.tick).unlink(missing_ok=True)   # a failed try's prose, now landed
    return scene


def draft_path(project: Any, tick: int) -> Path:
    """Where a failed tick keeps its prose."""
    return project.drafts_dir / f"draft_{tick:03d}.md"


# -- the sequences -----------------------------------------------------------------


def tick(session: Session, on_stage: OnStage | None = None) -> TickResult:
    """Run one tick on the session's project. The caller holds the project's lock."""
    reports: list[Any] = []

    def emit(report: Any) -> None:
        reports.append(report)
        if on_stage:
            on_stage(report)

    draft = begin(session)
    try:
        run_steps(session, draft, on_stage=emit)
        started = session.clock()
        scene = commit(session, draft)
        emit(StageReport("commit", session.clock() - started, calls=0))
        crashpoints.hit("after_commit")
    except BaseException:
        _flush_quietly(session)    # a second failure must not hide the first
        raise
    try:
        started = session.clock()
        summary = summarize.after_commit(session, draft.tick, memory=draft.memory)
        if summary is not None:
            summary.seconds = session.clock() - started
            emit(summary)
        session.flush()
    except (OSError, sqlite3.Error, NovelError) as exc:
        raise CommittedError(f"tick {draft.tick} is committed "
                             f"(scenes/{session.project.scene_path(draft.tick).name}); what "
                             f"failed after it: {explain(exc)}", tick=draft.tick) from exc
    project = session.project
    return TickResult(tick=draft.tick, scene_path=project.scene_path(draft.tick),
                      plan_path=project.plan_path(draft.tick), title=scene.title,
                      words=scene.words, plan=draft.plan, extraction=draft.extraction,
                      tool_results=draft.tool_results, memory_changes=draft.changes,
                      stages=[r for r in reports], summary=summary,
                      reports={stage: b.report for stage, b in draft.built.items()},
                      warnings=list(draft.warnings), notices=draft.notices)


def _flush_quietly(session: Session) -> None:
    try:
        session.flush()
    except (OSError, sqlite3.Error):
        pass


def preview(session: Session, stage: str) -> Built:
    """Build the next tick's prompt for `stage` without committing anything.

    The stages before `stage` are answered by the session's model: open it with
    `stand_in=True` (the offline model) so that no LLM is called.
    """
    if stage not in {s.stage for s in STEPS}:
        raise ValueError(f"no stage {stage!r}")
    draft = begin(session)
    run_steps(session, draft, until=stage)
    return draft.built[stage]
