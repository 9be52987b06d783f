"""The tick's sequences, each a list of steps over a draft each step returns anew.

    tick:        begin -> planner -> writer -> extractor -> audit -> knowledge -> commit
    land_given:  begin -> extractor -> audit (report) -> knowledge -> commit   (an import)
    land_held:   begin, the held draft taken in -> knowledge -> commit   (audit accept)
    then, once committed:  history entry -> summaries owed -> outline revision -> index
    preview:     begin -> the stages before `stage` -> `stage`'s prompt built   (context)

Prints nothing. Every command that runs any of it goes through here with a Session
(tick/session.py). A step is a function `(TickContext, TickDraft) -> TickDraft`
(tick/draft.py); the model stages are the registry's (tick/registry.py: the tick runs
every stage declared of kind TICK, in order), each built, asked and applied by its
own module, and the audit, the knowledge it records, the commit and what follows are
steps like them (tick/stages/). If a stage fails nothing is committed; prose already
written is kept under `.novel/drafts/`, and the TickError says which stage failed and
carries the model's error as its cause. Once the commit has landed, a failure after
it is a CommittedError: the tick stands.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from novel_agent import crashpoints
from novel_agent.audit.held import held_draft, read_held
from novel_agent.config.stages import verb
from novel_agent.context.prompts import check_templates
from novel_agent.errors import (
    AuditHoldError,
    CommittedError,
    DamagedBookError,
    ModelError,
    NovelError,
    TickError,
)
from novel_agent.files import atomic_write
from novel_agent.history import hooks as history
from novel_agent.storage import explain
from novel_agent.story.decisions import Extraction
from novel_agent.story.lore import load_lorebook
from novel_agent.story.memory.kept import item_files
from novel_agent.story.memory.read import FOLDERS, Listed
from novel_agent.story.outline.standing import BookStanding, read_standing, refuse_finished
from novel_agent.story.project.damage import check_next_tick, check_read
from novel_agent.story.project.folder import Project
from novel_agent.story.scenes import SceneReader
from novel_agent.story.steer import read_steer
from novel_agent.story.style import read_style
from novel_agent.story.summaries import load_tree
from novel_agent.tick.draft import GivenScene, Start, TickContext, TickDraft, TickResult
from novel_agent.tick.events import OnStage, StageEvent
from novel_agent.tick.registry import Stage, tick_stages
from novel_agent.tick.registry import stage as stage_named
from novel_agent.tick.session import Session
from novel_agent.tick.stage_prompts import Built
from novel_agent.tick.stages import audit, commit, revise_outline, summarize
from novel_agent.tick.stages.audit import HELD_CHOICES

Step = Callable[[TickContext, TickDraft], TickDraft]

__all__ = ["GivenScene", "Step", "TickDraft", "TickResult", "begin", "held_in_the_way",
           "land_given", "land_held", "preview", "tick"]


# -- the steps ---------------------------------------------------------------------


def model_step(stage: Stage[Any], *, last: bool = False) -> Step:
    """The step of a model stage: its prompt built, the model asked, the answer applied,
    its event told (`last`: the commit comes next). A model failure fails the tick, the
    prose written so far kept."""
    def run(ctx: TickContext, d: TickDraft) -> TickDraft:
        started = ctx.session.clock()
        d = stage.build(ctx, d)
        try:
            answer, call = stage.ask(ctx, d)
            d = stage.apply(ctx, d, answer, call)
        except ModelError as exc:
            raise _failed(ctx, d, stage.name, exc) from exc
        d = d.told(call.warning)
        crashpoints.hit(f"after_{verb(stage.name)}")
        ctx.emit(StageEvent(stage.name, ctx.session.clock() - started, call.prompt_tokens,
                            call.completion_tokens, call.cached_tokens, len(call.completions),
                            commit_next=last))
        return d
    return run


def _failed(ctx: TickContext, d: TickDraft, stage: str, exc: ModelError) -> TickError:
    """The tick's error for a stage that failed; prose already written is kept."""
    kept = ""
    if d.prose and d.given is None:     # a given scene's prose is in its source
        path = commit.draft_path(ctx.project, d.tick)
        atomic_write(path, d.prose + "\n")
        kept = str(path)
    return TickError(f"tick {d.tick} failed in {stage}: {exc}"
                     + (f"; the draft prose is kept in {kept}" if kept else ""),
                     stage=stage, draft_path=kept or None)


def model_steps(stages: Sequence[Stage[Any]]) -> tuple[Step, ...]:
    """The steps of `stages`, in order, the last told that the commit comes next."""
    return tuple(model_step(s, last=i == len(stages) - 1) for i, s in enumerate(stages))


def committing(ctx: TickContext, d: TickDraft) -> TickDraft:
    """The commit (tick/stages/commit.py), timed as a stage of its own."""
    started = ctx.session.clock()
    d = commit.step(ctx, d)
    ctx.emit(StageEvent("commit", ctx.session.clock() - started, calls=0))
    crashpoints.hit("after_commit")
    return d


def entry(ctx: TickContext, d: TickDraft) -> TickDraft:
    """The tick's entry in the history (history/hooks.py)."""
    assert d.scene is not None
    history.after_tick(ctx.project, d.tick, d.scene.title, d.scene.words,
                       imported=d.given is not None, note=d.start.note, now=ctx.session.now,
                       written=list(d.written), seen=ctx.session.seen)
    return d


def summaries(ctx: TickContext, d: TickDraft) -> TickDraft:
    """The summaries owed after the commit (tick/stages/summarize.py), and their entry."""
    session = ctx.session
    started = session.clock()
    report = summarize.after_commit(session, d.tick, memory=d.memory, tree=d.start.tree)
    if report is None:
        return d
    report.seconds = session.clock() - started
    ctx.emit(summarize.summary_event(report))
    history.after_summaries(ctx.project, report.made, now=session.now, seen=session.seen)
    return replace(d, summary=report)


def outline_revision(ctx: TickContext, d: TickDraft) -> TickDraft:
    """Where the book stands once the tick has landed (a book with an outline): finished
    when its last beat landed; the rest of the outline revised at a checkpoint where the
    story drifted from it (tick/stages/revise_outline.py)."""
    after = _standing_after(ctx, d)
    if d.standing is None or after is None:
        return d
    notices = revise_outline.at_checkpoint(ctx.session, d.tick, d.memory, d.standing, after,
                                           ctx.emit)
    d = d.told(*notices)
    return replace(d, finished=after.finished_line()) if after.finished else d


def outline_finished(ctx: TickContext, d: TickDraft) -> TickDraft:
    """Whether the tick finished the book (no revision: a given or held scene's)."""
    after = _standing_after(ctx, d)
    return replace(d, finished=after.finished_line()) if after and after.finished else d


def _standing_after(ctx: TickContext, d: TickDraft) -> BookStanding | None:
    if d.standing is None:
        return None
    return read_standing(ctx.project, ctx.config.outline.curve, upto=d.tick,
                         loops=d.memory.loops)


def index(ctx: TickContext, d: TickDraft) -> TickDraft:
    """The index told of the tick's files and summaries; the usage rows written; the
    tick's memory kept for the next (Session.landed)."""
    made = [doc.path for doc in d.summary.made if doc.path] if d.summary else []
    ctx.session.sync_index(d.memory, paths=[*d.written, *made])
    ctx.session.flush(sync=False)
    ctx.session.landed(d.memory)
    return d


LANDING: tuple[Step, ...] = (audit.step, audit.knowledge, committing)
AFTER: tuple[Step, ...] = (entry, summaries, outline_revision, index)
AFTER_GIVEN: tuple[Step, ...] = (entry, summaries, outline_finished, index)


# -- the sequences -----------------------------------------------------------------


def begin(session: Session, tick: int | None = None, *, note: str = "",
          given: GivenScene | None = None, recorded: Sequence[str] = ()) -> TickDraft:
    """The draft the next tick (or tick `tick`) starts from: memory, the scenes, the
    summaries, the lore, the style and where the book stands, read once; the index
    brought in step with hand edits. `note`: a one-tick author's note after steer.md's;
    `given`: an imported piece (no note is read: no writer sees it); `recorded`: the
    history's lines for hand edits, said first."""
    project = session.project
    check_templates(project.templates_dir)   # a broken template fails before any call
    listed: Listed = {}      # memory's folders as read: the index's sync need not look again
    seen = session.seen.folders_now(f"memory/{kind}/" for kind in FOLDERS)  # history's look
    # the files that may have moved since the last tick read them (by the history's look,
    # which the kernel tells): only they are looked at, by the memory and the index
    moved = session.seen.moved_since(session.begun_at) if seen is not None else None
    session.begun_at = None
    memory, before = session.memory.read(listed, given=seen and {
        kind: seen[f"memory/{kind}/"] for kind in FOLDERS}, moved=None if moved is None
        else item_files(moved))
    tick_no, state = tick or project.tick() + 1, project.state()
    steer, mark = _steer(project, tick_no, state, note, given)
    synced = session.sync_index(memory, listed=listed, moved=moved)   # edits by hand
    scenes = SceneReader(project.scenes_dir)
    lore = load_lorebook(project.lore_dir)
    start = Start(tick=tick_no, story=project.story(), before=before, scenes=scenes,
                  tree=load_tree(project.summaries_dir, session.docs), lore=lore,
                  style=read_style(project.root),       # a mistake in it stops the tick here
                  standing=read_standing(project, session.config.outline.curve, scenes,
                                         upto=tick_no - 1, loops=memory.loops),
                  steer=steer, steer_mark=mark, note=note.strip(), unread=synced.unread,
                  recent=session.config.style.recent_scenes)
    session.at_tick(tick_no)
    session.begun_at = session.seen.looks if seen is not None else None
    d = TickDraft(start=start, memory=memory, given=given,
                  notices=(*recorded, *session.take_notes()))
    return d.told(synced.changes_line()).warned(*lore.problems)


def _steer(project: Project, tick: int, state: dict[str, Any], note: str,
           given: GivenScene | None) -> tuple[str, dict[str, Any] | None]:
    """The author's note in force for `tick` (steer.md's, then `note`) and what state.yaml
    keeps of it; a given scene reads none and keeps the mark as it was."""
    if given is not None:
        mark = state.get("steer")
        return "", mark if isinstance(mark, dict) else None
    read = read_steer(project.steer_file)
    steer = read.text if read.active(tick, state) else ""
    return "\n\n".join(part for part in (steer, note.strip()) if part), read.mark(tick, state)


def tick(session: Session, on_stage: OnStage | None = None, note: str = "") -> TickResult:
    """Run one tick on the session's project. The caller holds the project's lock.
    `note`: an author's note for this tick only (`novel redo --note`), after steer.md's.
    A book that is not whole, or a held next tick, stops it before any model call. An
    index a query found garbled before the commit is rebuilt from the files and the tick
    runs again, once (nothing of it was committed), its first notice saying so."""
    try:
        return _tick(session, on_stage, note)
    except sqlite3.DatabaseError as exc:
        healed = session.heal_index(exc)
        if not healed:
            raise
    result = _tick(session, on_stage, note)
    return replace(result, notices=[f"{healed}; the tick ran again", *result.notices])


def _tick(session: Session, on_stage: OnStage | None, note: str) -> TickResult:
    check_next_tick(session.project)
    held_in_the_way(session.project)
    recorded = history.before_tick(session.project, session.now,     # hand edits: their entry
                                   seen=session.seen)
    draft = begin(session, note=note, recorded=recorded)
    _check_read(session, draft)
    refuse_finished(draft.standing)
    return _land(session, draft, (*model_steps(tick_stages()), *LANDING), AFTER, on_stage)


def land_given(session: Session, given: GivenScene,
               on_stage: OnStage | None = None) -> TickResult:
    """Land a scene whose plan and prose are given (`novel import`'s pieces) as tick
    `given.tick`, by the tick's own steps with the planner and the writer left out: the
    extractor (with its fallback; none if `given.extract` is off: the title is the
    summary, and no summaries are made), the audit (reporting only), the commit (prompt
    logs past `context.keep_prompt_logs` stripped). The caller holds the project's lock."""
    check_next_tick(session.project, given.tick)
    recorded = history.before_tick(session.project, session.now, seen=session.seen)
    draft = begin(session, tick=given.tick, given=given, recorded=recorded)
    _check_read(session, draft)
    draft = replace(draft, prose=given.prose, plan=given.plan(draft.memory, draft.story))
    if not given.extract:
        draft = replace(draft, extraction=Extraction(summary=[draft.planned.title]))
        return _land(session, draft, (committing,),
                     tuple(s for s in AFTER_GIVEN if s is not summaries), on_stage)
    steps = (*model_steps([stage_named("extractor")]), *LANDING)
    return _land(session, draft, steps, AFTER_GIVEN, on_stage)


def land_held(session: Session, on_stage: OnStage | None = None) -> TickResult:
    """`novel audit accept`: land the tick `audit.mode: hold` stopped, as it was held, with
    no model called: its plan's tools run again and its extraction is applied to memory
    as it stands (a hand edit made since counts), its findings are recorded with it;
    then the commit, the history entry and the summaries owed, as any tick's. A
    ProjectError says why it cannot be (held_draft). The caller holds the lock."""
    project = session.project
    held = held_draft(project.novel_dir, project.tick() + 1)
    recorded = history.before_tick(project, session.now, seen=session.seen)
    draft = begin(session, tick=held.tick,
                  recorded=(*recorded, f"tick {held.tick} was {audit.ACCEPTED}"))
    draft = audit.apply_held(TickContext(session), draft, held)
    return _land(session, draft, (audit.knowledge, committing), AFTER_GIVEN, on_stage)


def preview(session: Session, stage: str) -> Built:
    """Build the next tick's prompt for `stage` without committing anything.

    The stages before `stage` are answered by the session's model: open it with
    `stand_in=True` (the offline model) so that no LLM is called.
    """
    stages = tick_stages()
    if stage not in {s.name for s in stages}:
        raise ValueError(f"no stage {stage!r}")
    ctx, d = TickContext(session), begin(session)
    for each in stages:
        d = each.build(ctx, d)
        if each.name == stage:
            break
        answer, call = each.ask(ctx, d)
        d = each.apply(ctx, d, answer, call)
    built = d.built[stage]
    lore = [w for w in d.start.lore.problems if w not in built.report.get("warnings", [])]
    built.report["warnings"] = [*built.report.get("warnings", []), *lore]   # as the tick says
    return built


def held_in_the_way(project: Project) -> None:
    """Raise AuditHoldError when the next tick is held (audit.mode hold): a tick would
    write it again over the held draft; the author says what becomes of it."""
    held = read_held(project.novel_dir)
    if held is None or held[0].get("tick") != project.tick() + 1:
        return        # none, or a tick the story has moved past (its commit removes it)
    data, findings = held
    lines = [f.line() for f in findings]
    raise AuditHoldError(f"tick {data['tick']} is held by the continuity audit ({len(lines)} "
                         f"finding(s); the draft: {data.get('draft', '')}): {HELD_CHOICES}:"
                         + "".join(f"\n  {line}" for line in lines),
                         tick=data["tick"], findings=lines, draft_path=str(data.get("draft", "")))


def _check_read(session: Session, draft: TickDraft) -> None:
    """Stop the tick on a scene that cannot be read, or summaries past the last scene."""
    try:
        check_read(draft.tick, dict(draft.start.unread), draft.start.tree.last_tick())
    except DamagedBookError:
        session.begun_at = None      # the next try syncs every file again, and sees it again
        raise


def _land(session: Session, draft: TickDraft, steps: Sequence[Step], after: Sequence[Step],
          on_stage: OnStage | None) -> TickResult:
    """From a begun draft: `steps` up to the commit, then (committed) `after`."""
    events: list[StageEvent] = []

    def emit(event: StageEvent) -> None:
        events.append(event)
        if on_stage:
            on_stage(event)

    ctx = TickContext(session, emit)
    try:
        for step in steps:
            draft = step(ctx, draft)
    except BaseException:
        _flush_quietly(session)    # a second failure must not hide the first
        raise
    try:
        for step in after:
            draft = step(ctx, draft)
    except (OSError, sqlite3.Error, NovelError) as exc:
        raise CommittedError(f"tick {draft.tick} is committed "
                             f"(scenes/{session.project.scene_path(draft.tick).name}); what "
                             f"failed after it: {explain(exc)}", tick=draft.tick) from exc
    return _result(session.project, draft, events)


def _result(project: Project, d: TickDraft, events: list[StageEvent]) -> TickResult:
    assert d.scene is not None
    return TickResult(tick=d.tick, scene_path=project.scene_path(d.tick),
                      plan_path=project.plan_path(d.tick), title=d.scene.title,
                      words=d.scene.words, plan=d.planned, extraction=d.extracted,
                      tool_results=list(d.tool_results), memory_changes=list(d.changes),
                      stages=events, summary=d.summary,
                      reports={stage: b.report for stage, b in d.built.items()},
                      warnings=list(d.warnings), notices=list(d.notices),
                      fallback=d.fallback,
                      findings=list(d.audit.findings) if d.audit else [],
                      finished=d.finished)


def _flush_quietly(session: Session) -> None:
    try:
        session.flush()
    except (OSError, sqlite3.Error):
        pass
