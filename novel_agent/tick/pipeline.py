"""The tick's one sequence: plan -> write -> extract -> commit -> summarize (-> the
outline's revision, when the scene closed a chapter off course). Prints nothing.

Every command that runs any of it goes through here with a Session:
`tick(session)` (`novel tick`, `novel run`) runs the whole sequence;
`land_given(session, given)` (`novel import`) runs the same sequence with the
planner and the writer replaced by a given plan and prose: begin -> the
extractor step (its fallback included) -> commit -> summaries;
`preview(session, stage)` (`novel context`) runs the same steps up to
building `stage`'s prompt, with the session's stand-in model answering the
stages before it.

Each step builds its stage's prompt (fitted by the context engine), asks the
model, and applies the answer to the tick's draft. If a stage fails nothing
is committed; prose already written is kept under `.novel/drafts/`, and the
TickError says which stage failed and carries the model's error as its cause.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from novel_agent import crashpoints
from novel_agent.audit.held import HELD_FILE, held_draft, held_text, read_held
from novel_agent.audit.knowledge import CLOCK_FILE
from novel_agent.config.budget import Budget
from novel_agent.context.prompts import check_templates
from novel_agent.context.tier3 import planner_overall, select_tier3
from novel_agent.context.writer import TIER3_STRETCH, Piece
from novel_agent.errors import (
    AuditHoldError,
    CommittedError,
    ContextOverflowError,
    DamagedBookError,
    ModelError,
    ModelResponseError,
    NovelError,
    TickError,
)
from novel_agent.files import atomic_write
from novel_agent.history import hooks as history
from novel_agent.models.ask import StageCall, keeping_prefix
from novel_agent.models.base import Request
from novel_agent.storage import explain
from novel_agent.story.book_standing import (
    BookStanding,
    read_standing,
    refuse_finished,
    scene_shape,
)
from novel_agent.story.damage import check_next_tick, check_read
from novel_agent.story.decisions import Extraction, Plan
from novel_agent.story.lore import Lorebook, load_lorebook
from novel_agent.story.memory import FOLDERS, Listed, Memory, find_person
from novel_agent.story.memory_kept import item_files
from novel_agent.story.name_pool import POOL_FILE, NamePool
from novel_agent.story.payoffs import final_act
from novel_agent.story.project import Story
from novel_agent.story.scenes import Scene, SceneReader, word_count
from novel_agent.story.steer import read_steer
from novel_agent.story.style import read_style
from novel_agent.story.summaries import SummaryTree, load_tree
from novel_agent.story.voices import wanting
from novel_agent.tick import book_names, payoff_step, prose_step
from novel_agent.tick.events import OnStage, Stage, StageEvent
from novel_agent.tick.prompt_log import log_path, log_text, tidied_logs
from novel_agent.tick.scene_memory import extraction_step, name_check, person_check, plan_step
from novel_agent.tick.session import Session
from novel_agent.tick.stage_prompts import Built, build_extractor, build_planner, build_writer
from novel_agent.tick.stages import audit as audit_stage
from novel_agent.tick.stages import extract, revise_outline, summarize, write
from novel_agent.tick.stages import plan as plan_stage
from novel_agent.tick.stages.commit import commit_tick
from novel_agent.tick.stages.tools import REJECTED


@dataclass
class TickDraft:
    """One tick in progress: what it read, and what each stage has made so far."""

    tick: int
    story: Story
    memory: Memory
    before: Memory                   # as the files held it (never changed: see memory_kept)
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
    lore: Lorebook = field(default_factory=Lorebook)   # the lorebook, read at the tick's start
    given: GivenScene | None = None   # the plan and prose, when given rather than made
    note: str = ""                   # a one-tick note (`novel redo --note`), for the history
    audit: audit_stage.AuditResult | None = None   # the continuity audit's findings
    pre_extract: tuple[Memory, int] | None = None   # memory and changes before the extraction
                                                    # (audit.mode revise: a revision re-applies)
    clock_text: str = ""      # memory/clock.yaml's new text, when the scene moved the clock on
    cast_named: dict | None = None   # the POV and cast as the planner named them, when memory
                                     # names them otherwise (the tools ran with these)
    pool: NamePool | None = None     # the book's names (names.yaml), once read or made
    pool_text: str = ""              # names.yaml's text, when this tick made the pool
    written: list[Path] = field(default_factory=list)   # the files the commit wrote or removed
    unread: dict[str, str] = field(default_factory=dict)  # scenes that cannot be read: why
    standing: BookStanding | None = None   # where the book stands: a book with an outline
    payoffs: dict[str, dict[str, Any]] = field(default_factory=dict)  # what the commit set of
                                           # the loops' payoffs and status (story/payoffs.py)
    style: dict[str, Any] | None = None    # the project's style.yaml (story/style.py), if any
    phrases: Counter[str] | None = None    # the slop list's phrases in the last scenes (prose_step)
    checked: prose_step.Checked | None = None   # what the check found of the scene
    rewritten: str = ""                    # which draft was kept, when written again for it
    mended: int = 0                        # stale sentences written again (prose_step)

    @property
    def planned(self) -> Plan:
        """The plan, once the planner made it (or a given or held scene brought it)."""
        assert self.plan is not None, f"tick {self.tick} has no plan yet"
        return self.plan

    @property
    def extracted(self) -> Extraction:
        """The extraction, once the extractor (or its fallback) made it."""
        assert self.extraction is not None, f"tick {self.tick} has no extraction yet"
        return self.extraction


@dataclass
class GivenScene:
    """A scene whose plan and prose are given, not planned and written (an imported
    piece), for `land_given`. The hooks see the draft as `begin` read it."""

    tick: int
    prose: str
    plan: Callable[[Memory, Story], Plan]     # the scene's plan, from memory as it stands
    # after a usable extraction, before it is applied: who it introduces is created in
    # draft.memory and draft.plan settled; returns what changed, one line each
    introduce: Callable[[TickDraft], list[str]] | None = None
    extract: bool = True      # False: no model call; the title is the summary, no summaries
    record: dict[str, Any] = field(default_factory=dict)   # added to the plan record
    state: dict[str, Any] = field(default_factory=dict)    # added to state.yaml


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
    stages: list[StageEvent] = field(default_factory=list)
    summary: summarize.SummaryReport | None = None   # checkpoints made after the commit
    reports: dict[str, dict] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)  # names rejected, ...
    notices: list[str] = field(default_factory=list)   # recovery done, warnings: one line each
    fallback: str = ""     # why the extractor's answer was not used (its summary: the prose's)
    findings: list = field(default_factory=list)   # the continuity audit's (audit.Finding)
    finished: str = ""     # "the book is finished: …" when the tick landed the outline's last beat



# -- the steps ---------------------------------------------------------------------


def begin(session: Session, tick: int | None = None) -> TickDraft:
    """Read what the next tick (or tick `tick`) starts from, and point the session at it."""
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
    note = read_steer(project.steer_file)
    draft = TickDraft(tick=tick_no, story=project.story(), memory=memory, before=before,
                      steer=note.text if note.active(tick_no, state) else "",
                      scenes=SceneReader(project.scenes_dir),
                      tree=load_tree(project.summaries_dir, session.docs),
                      steer_mark=note.mark(tick_no, state),
                      notices=list(project.notices))
    project.notices.clear()
    synced = session.sync_index(memory, listed=listed, moved=moved)   # edits by hand
    changed, draft.unread = synced.changes_line(), synced.unread
    draft.notices += [changed] if changed else []
    draft.lore = load_lorebook(project.lore_dir)
    draft.warnings += draft.lore.problems
    draft.style = read_style(project.root)       # a mistake in it stops the tick here
    draft.standing = read_standing(project, session.config.outline.curve, draft.scenes,
                                   upto=draft.tick - 1, loops=memory.loops)
    session.at_tick(draft.tick)
    session.source.story, session.source.memory = draft.story, draft.memory
    session.source.steer = draft.steer
    session.source.plan, session.source.prose, session.source.summary = None, "", None
    session.source.target_tension = draft.standing.target if draft.standing else None
    session.source.due = [str(loop.get("id")) for loop in draft.standing.due] \
        if draft.standing else []
    session.source.no_new_loops = draft.standing is not None and final_act(
        draft.standing.outline, draft.standing.standing)
    session.begun_at = session.seen.looks if seen is not None else None
    return draft


def room_in(session: Session, budget: Budget) -> Callable[[list[dict[str, str]]], int]:
    """Tokens the window leaves for an answer after `messages` (for a continuation or a
    repair, which are longer than the fitted prompt)."""
    return lambda messages: budget.left_after(session.counter_of(budget.stage).count_messages(messages))


def _build_plan(session: Session, d: TickDraft) -> Built:
    book_names.read_pool_for(session, d)
    return build_planner(session, story=d.story, memory=d.memory, tick=d.tick, scenes=d.scenes,
                         overall=planner_overall(d.tree, session.config), steer=d.steer,
                         lore=d.lore, tree=d.tree, names=book_names.offer_for(d),
                         standing=d.standing)


TITLES_SEEN = 30     # a scene's title differs from the titles of this many before it


def _plan(session: Session, d: TickDraft) -> StageCall:
    gen = session.config.generation
    budget = session.budget("planner")
    beats = d.standing.choices(ahead=not session.lean_for("planner")) if d.standing else ()
    built = d.built["planner"]
    model = keeping_prefix(session.model, built.stable_prefix, built.growing_prefix)
    d.plan, call = plan_stage.run(model, built.messages,
                                  max_tokens=budget.max_output,
                                  max_tools=gen.max_tools_per_tick, room=room_in(session, budget),
                                  lean=session.lean_for("planner"), beats=beats)
    d.plan, warning = plan_stage.settle_beat(d.plan, beats)
    d.notices += [warning] if warning else []
    d.plan, warning = payoff_step.closed_plan(d.plan, d.standing)
    d.notices += [warning] if warning else []
    check = name_check(d.story)
    last = d.scenes(d.tick - 1)
    d.plan, warning = plan_stage.own_words(d.plan, d.built["planner"].instructions)
    d.warnings += [warning] if warning else []
    d.plan = plan_stage.name_heads(plan_stage.premise_epithets(
        d.plan, d.story.premise, d.story.protagonist), check)
    fallbacks = [last.pov if last else "", d.story.protagonist.split(",")[0]]
    d.plan, warning = plan_stage.settle_pov(d.plan, person_check(d.memory, check), fallbacks)
    d.warnings += [warning] if warning else []
    d.plan, gone = plan_stage.among_the_living(d.plan, lambda name: find_person(d.memory, name),
                                               fallbacks)
    d.warnings += gone
    d.plan, gone = plan_stage.remembered_only(d.plan, lambda name: find_person(d.memory, name))
    d.warnings += gone
    d.plan, warning = plan_stage.distinct_title(
        d.plan, [s.title for s in d.scenes.recent(d.tick - 1, TITLES_SEEN)])
    d.warnings += [warning] if warning else []
    book_names.guard_plan(session, d, check)
    lines = plan_step(d.memory, d.plan, d.tick, gen.max_tools_per_tick, check)
    named = d.plan
    d.plan = plan_stage.canonical_names(d.plan, lambda name: find_person(d.memory, name))
    if (named.pov, named.characters) != (d.plan.pov, d.plan.characters):
        d.cast_named = {"pov": named.pov, "characters": list(named.characters)}
    d.tool_results = [line for line in lines if not line.startswith(REJECTED)]
    d.warnings += [line for line in lines if line.startswith(REJECTED)]
    session.source.plan = d.plan
    return call


def _phrases_before(session: Session, d: TickDraft) -> Counter[str]:
    """The slop list's phrases in the last style.recent_scenes scenes (counted once a tick)."""
    if d.phrases is None:
        recent = d.scenes.recent(d.tick - 1, session.config.style.recent_scenes) \
            if session.config.style.recent_scenes else []
        d.phrases = prose_step.counted([s.body for s in recent], prose_step.phrases_of(d.style))
    return d.phrases


def _build_write(session: Session, d: TickDraft, budget: Budget | None = None) -> Built:
    tree = d.tree
    avoid = prose_step.avoid_line(prose_step.used_up(_phrases_before(session, d),
                                                     session.config.style.max_phrase_uses))
    tier3 = lambda budget, upto: [Piece(doc.name, doc.block())  # noqa: E731
                                  for doc in select_tier3(tree, budget, session.counter_of("writer").count,
                                                          upto=upto,
                                                          stretch=TIER3_STRETCH * budget)]
    return build_writer(session, story=d.story, memory=d.memory, plan=d.planned, tick=d.tick,
                        scenes=d.scenes, tool_results=d.tool_results, steer=d.steer,
                        tier3=tier3, tier3_ends=[c.last for c in tree.checkpoints()],
                        lore=d.lore, budget=budget, standing=d.standing, style=d.style,
                        avoid=avoid)


COPY_SOURCES = 5      # the scenes before this one whose paragraphs the writer may not copy


def _write(session: Session, d: TickDraft) -> StageCall:
    budget = session.budget("writer")
    built = d.built["writer"]
    model = keeping_prefix(session.model, built.stable_prefix, built.growing_prefix)
    d.prose, call = write.run(model, built.messages,
                              max_tokens=budget.max_output,
                              min_words=session.config.generation.scene_min_words,
                              max_words=session.config.generation.scene_max_words,
                              title=d.planned.title, room=room_in(session, budget),
                              earlier="\n\n".join(s.body for s in d.scenes.recent(
                                  d.tick - 1, COPY_SOURCES)),
                              short=session.lean_for("writer"),   # the 1.5B ends scenes early, strays
                              cast=[d.planned.pov, *d.planned.characters])
    _check_prose(session, d, model, call)
    session.source.prose = d.prose
    least, words = session.config.generation.scene_min_words, word_count(d.prose)
    if words < least:
        d.notices.append(f"scene {d.tick} has {words} words, under "
                         f"generation.scene_min_words ({least})")
    return call


def _check_prose(session: Session, d: TickDraft, model: Any, call: StageCall) -> None:
    """The scene's phrases and style checked (tick/prose_step.py); with faults, a notice.
    Where style.rewrite says: a scene told in the wrong person or tense is written once
    more, told what to mend, the better of the two kept (the second call's completions
    join the first's); then its stale sentences (a phrase over its allowance, words an
    earlier scene said) are each written again on their own (`_mend_sentences`)."""
    config = session.config.style
    phrases, before = prose_step.phrases_of(d.style), _phrases_before(session, d)
    d.checked = found = prose_step.check(d.prose, before, phrases, config.max_phrase_uses,
                                         d.style)
    said = prose_step.notice(d.tick, found, config, d.style)
    if not prose_step.rewrites(config, session.lean_for("writer")):
        d.notices += [said] if said else []
        return
    if found.wrong:
        _rewrite_scene(session, d, model, call, found, said)
    _mend_sentences(session, d, call)
    if said and not found.wrong:
        d.notices.append(said + (f": {d.mended} sentence(s) written again"
                                 if d.mended else ""))


def _rewrite_scene(session: Session, d: TickDraft, model: Any, call: StageCall,
                   found: prose_step.Checked, said: str) -> None:
    """The scene written once more, told what to mend; the better draft kept."""
    config, gen = session.config.style, session.config.generation
    phrases, before = prose_step.phrases_of(d.style), _phrases_before(session, d)
    budget, messages = session.budget("writer"), d.built["writer"].messages
    again = [*messages[:-1], {"role": messages[-1]["role"], "content": messages[-1]["content"]
                              + "\n\n" + prose_step.mend(found, d.style)}]
    limit = min(budget.max_output, room_in(session, budget)(again))
    if limit < write.MIN_CONTINUATION:
        d.notices.append(said)
        return
    prose, more = write.run(model, again, max_tokens=limit, min_words=gen.scene_min_words,
                            max_words=gen.scene_max_words, title=d.planned.title,
                            room=room_in(session, budget), short=session.lean_for("writer"),
                            cast=[d.planned.pov, *d.planned.characters])
    call.completions += more.completions
    second = prose_step.check(prose, before, phrases, config.max_phrase_uses, d.style)
    kept = second.rank() < found.rank()
    if kept:
        d.prose, d.checked, call.warning = prose, second, more.warning
    d.rewritten = "second" if kept else "first"
    d.notices.append(f"{said}: written again once (style.rewrite: {config.rewrite}); the "
                     f"{'second' if kept else 'first'} draft is kept")


def _mend_sentences(session: Session, d: TickDraft, call: StageCall) -> None:
    """Each stale sentence of the scene (prose_step.stale_sentences: a listed phrase over
    its allowance, ECHO words in a row from one of the last COPY_SOURCES scenes) asked
    of the writer's model again on its own, its answer spliced in where it will do
    (prose_step.mended; a phrase's sentence asked once more when its first answer will
    not do); the scene checked again. A failed call leaves the sentence."""
    config = session.config.style
    phrases, before = prose_step.phrases_of(d.style), _phrases_before(session, d)
    over = list(d.checked.over) if d.checked else []
    earlier = [s.body for s in d.scenes.recent(d.tick - 1, COPY_SOURCES)]
    done: list[tuple[prose_step.Stale, str]] = []
    for stale in prose_step.stale_sentences(d.prose, over, phrases, earlier):
        size = session.counter_of("writer").count(stale.sentence)
        for _ in range(2 if stale.words in over else 1):    # a stock phrase: asked twice
            try:
                answer = session.model.complete(Request(
                    stage="writer", messages=prose_step.mend_messages(stale),
                    max_tokens=2 * size + 24))
            except NovelError:
                break
            call.note(answer)
            text = prose_step.mended(stale, answer.text, phrases)
            if text:
                done.append((stale, text))
                break
    if done:
        d.prose = prose_step.splice(d.prose, done)
        d.mended = len(done)
        d.checked = prose_step.check(d.prose, before, phrases, config.max_phrase_uses,
                                     d.style)


UNKNOWN = "unknown"   # what the extractor is told when the plan names no POV or place


def as_told(plan: Plan) -> Plan:
    """The plan as the extractor is told it: "unknown" where it names no POV or place."""
    return replace(plan, pov=plan.pov or UNKNOWN, location=plan.location or UNKNOWN)


def _build_extract(session: Session, d: TickDraft) -> Built:
    plan = as_told(d.planned)
    return build_extractor(session, story=d.story, memory=d.memory, plan=plan, prose=d.prose,
                           tick=d.tick, **asked_of(session, d, d.prose))


VOICES_ASKED = (2, 1)    # voice cards an extractor is asked at most (a served, a local model)


def asked_of(session: Session, d: TickDraft, prose: str) -> dict[str, Any]:
    """What the extractor is asked beyond memory's changes: of the outline (a book with
    one), whether the beat the plan named happened and the scene's tension; and the voice
    cards of the scene's people who speak in `prose` and have none (story/voices.py)."""
    at, gen = d.standing, session.config.generation
    people = [c for c in (find_person(d.memory, n) for n in dict.fromkeys(
        [d.planned.pov, *d.planned.characters]) if n) if c is not None]
    voices = wanting(people, prose, VOICES_ASKED[session.lean_for("extractor")]) \
        if gen.enable_entity_updates else []
    return {"beat": at.beat(d.planned.beat) if at else None, "tension": at is not None,
            "voices": voices}


def _asks(session: Session, d: TickDraft, prose: str) -> dict[str, Any]:
    asked = asked_of(session, d, prose)
    return {"beat": asked["beat"] is not None, "tension": asked["tension"],
            "opens": not payoff_step.closing(d.standing), "voices": len(asked["voices"])}


def _extract(session: Session, d: TickDraft) -> StageCall:
    gen = session.config.generation
    try:
        budget = session.budget("extractor")
        d.extraction, call = extract.run(session.model, d.built["extractor"].messages,
                                         max_tokens=budget.max_output,
                                         room=room_in(session, budget),
                                         knowledge=session.knowledge,
                                         **_asks(session, d, d.prose))
        d.notices += d.extraction.corrected
    except ModelResponseError as exc:     # answered, twice, but nothing usable: the scene
        if not isinstance(exc.call, StageCall):   # still lands, summed up by its own words
            raise
        d.extraction, d.fallback = extract.from_prose(d.prose), str(exc)
        d.notices.append(f"the extractor's answer could not be used ({exc}); the scene's own "
                         "sentences stand as its summary; nothing of the scene is added to memory")
        return exc.call
    d.extraction = book_names.guard_extraction(d, d.extraction, d.prose)
    d.extraction, warning = payoff_step.closed_extraction(d.extraction, d.standing)
    d.notices += [warning] if warning else []
    if d.given is not None and d.given.introduce is not None:
        d.changes += d.given.introduce(d)
    if session.config.audit.mode == "revise":
        d.pre_extract = (d.memory.copy(), len(d.changes))
    d.changes += extraction_step(d.memory, d.extraction, tick=d.tick, prose=d.prose,
                                 generation=gen)
    return call


@dataclass(frozen=True)
class Step:
    """One model stage of the tick: build its prompt, then ask and apply the answer."""

    stage: Stage
    build: Callable[[Session, TickDraft], Built]
    answer: Callable[[Session, TickDraft], StageCall]


STAGE_VERBS = {"planner": "plan", "writer": "write", "extractor": "extract"}
STEPS = (Step("planner", _build_plan, _plan), Step("writer", _build_write, _write),
         Step("extractor", _build_extract, _extract))
GIVEN_STEPS = STEPS[2:]      # a given scene: the plan and prose are there; extract them


def run_steps(session: Session, draft: TickDraft, *, until: str | None = None,
              on_stage: OnStage | None = None, steps: tuple[Step, ...] = STEPS) -> None:
    """Run the model stages in order; with `until`, stop once that stage's prompt is built."""
    for step in steps:
        started = session.clock()
        draft.built[step.stage] = step.build(session, draft)
        if step.stage == until:
            return
        call = _answer(session, draft, step)
        crashpoints.hit(f"after_{STAGE_VERBS[step.stage]}")
        if on_stage:
            on_stage(StageEvent(step.stage, session.clock() - started, call.prompt_tokens,
                                call.completion_tokens, call.cached_tokens,
                                len(call.completions), commit_next=step is steps[-1]))


def _answer(session: Session, draft: TickDraft, step: Step) -> StageCall:
    """Ask the model for `step`; a model failure becomes a TickError, prose kept."""
    try:
        call = step.answer(session, draft)
        if call.warning:
            draft.notices.append(call.warning)
        return call
    except ModelError as exc:
        kept = ""
        if draft.prose and draft.given is None:     # a given scene's prose is in its source
            path = draft_path(session.project, draft.tick)
            atomic_write(path, draft.prose + "\n")
            kept = str(path)
        raise TickError(f"tick {draft.tick} failed in {step.stage}: {exc}"
                        + (f"; the draft prose is kept in {kept}" if kept else ""),
                        stage=step.stage, draft_path=kept or None) from exc


def plan_record(draft: TickDraft) -> dict[str, Any]:
    """plans/plan_NNN.yaml: what the planner decided, the tools' results, what the
    extractor found and changed (and, for a given scene, where it came from)."""
    record = {"tick": draft.tick, **draft.planned.to_dict(), "tool_results": draft.tool_results,
              "warnings": draft.warnings}
    if draft.cast_named:
        record["cast_named"] = draft.cast_named
    if draft.fallback:
        record["extraction_fallback"] = draft.fallback
    record |= {"extraction": draft.extracted.to_dict(), "memory_changes": draft.changes}
    if draft.payoffs:
        record["payoffs"] = draft.payoffs
    if draft.audit and draft.audit.mode != "off":
        record["audit"] = draft.audit.record()
    prose = draft.checked.record() if draft.checked else {}
    if prose or draft.rewritten or draft.mended:
        record["prose"] = prose | ({"rewritten": draft.rewritten} if draft.rewritten else {}) \
            | ({"mended": draft.mended} if draft.mended else {})
    return record | (draft.given.record if draft.given else {})


def tick_state(before: dict[str, Any], draft: TickDraft) -> dict[str, Any]:
    """state.yaml after the tick: the counter, the note's mark, the writer's tier bounds
    (none: the next tick's tiers start afresh), the recall history."""
    writer = draft.built.get("writer")
    state = {**before, "tick": draft.tick}
    for key, value in (("steer", draft.steer_mark), ("writer_tiers", writer.state if writer else None)):
        if value is None:
            state.pop(key, None)
        else:
            state[key] = value
    state["recall"] = recall_history(before, draft.tick, writer.report.get("recall") if writer else None)
    return state | (draft.given.state if draft.given else {})


def commit(session: Session, draft: TickDraft) -> Scene:
    """Land the scene, its plan, memory, the tier state and the prompt logs together."""
    plan, extraction, project = draft.planned, draft.extracted, session.project
    draft.payoffs, lines = payoff_step.settle_step(draft.memory, plan, draft.standing, draft.tick)
    draft.changes += lines
    scene = Scene(tick=draft.tick, body=draft.prose, title=plan.title or f"Scene {draft.tick}",
                  pov=plan.pov, location=plan.location, characters=list(plan.characters),
                  summary=list(extraction.summary), words=word_count(draft.prose),
                  tokens=session.counter.count(draft.prose),
                  **scene_shape(draft.standing, plan.beat, extraction.beat_status,
                                extraction.tension, extraction.tension_reason))
    record, state = plan_record(draft), tick_state(project.state(), draft)
    ctx = session.config.context
    logs = tidied_logs(project, draft.tick, keep=ctx.keep_prompt_logs,
                       kept_at_all=ctx.prompt_log_ticks,
                       every=session.config.generation.checkpoint_summary_interval)
    logs.update({log_path(project, draft.tick, stage): log_text(b.report, b.messages)
                 for stage, b in draft.built.items()})
    if draft.clock_text:
        logs[project.memory_dir / CLOCK_FILE] = draft.clock_text
    if draft.pool_text:
        logs[project.root / POOL_FILE] = draft.pool_text
    draft.written = commit_tick(project, scene, record, draft.memory, draft.before, state,
                                extra=logs)
    draft_path(project, draft.tick).unlink(missing_ok=True)   # a failed try's prose, now landed
    (project.novel_dir / HELD_FILE).unlink(missing_ok=True)   # a held tick, now passed
    return scene


RECALL_KEPT = 20     # ticks of the recall probe kept in state.yaml for `novel status`


def recall_history(state: dict[str, Any], tick: int, recall: dict[str, Any] | None) -> list:
    """The last RECALL_KEPT ticks' [tick, relevant facts, reached], this one added."""
    kept = [row for row in state.get("recall") or [] if isinstance(row, list) and len(row) == 3
            and row[0] < tick]
    if recall is not None:
        kept.append([tick, recall["relevant"], recall["reached"]])
    return kept[-RECALL_KEPT:]


def draft_path(project: Any, tick: int) -> Path:
    """Where a failed tick keeps its prose."""
    return project.drafts_dir / f"draft_{tick:03d}.md"


# -- the sequences -----------------------------------------------------------------


def tick(session: Session, on_stage: OnStage | None = None, note: str = "") -> TickResult:
    """Run one tick on the session's project. The caller holds the project's lock.
    `note`: an author's note for this tick only (`novel redo --note`), after steer.md's.
    A book that is not whole, or a held next tick, stops it before any model call."""
    check_next_tick(session.project)
    held_in_the_way(session.project)
    recorded = history.before_tick(session.project, session.now,     # hand edits: their entry
                                   seen=session.seen)
    draft = begin(session)
    _check_read(session, draft)
    refuse_finished(draft.standing)
    draft.notices[:0] = recorded
    if note:
        draft.note = note.strip()
        draft.steer = "\n\n".join(part for part in (draft.steer, draft.note) if part)
        session.source.steer = draft.steer
    return _land(session, draft, STEPS, on_stage, revise=True)


def land_given(session: Session, given: GivenScene,
               on_stage: OnStage | None = None) -> TickResult:
    """Land a scene whose plan and prose are given (`novel import`'s pieces) as tick
    `given.tick`, by the tick's own sequence with the planner and the writer left out:
    begin -> the extractor step (with its fallback; none if `given.extract` is off) ->
    commit (prompt logs past `context.keep_prompt_logs` stripped) -> summaries. The
    author's note is not read: no writer sees it. The caller holds the project's lock."""
    check_next_tick(session.project, given.tick)
    recorded = history.before_tick(session.project, session.now, seen=session.seen)
    draft = begin(session, tick=given.tick)
    _check_read(session, draft)
    draft.notices[:0] = recorded
    draft.given, draft.prose = given, given.prose
    draft.plan = given.plan(draft.memory, draft.story)
    draft.steer, draft.steer_mark = "", _kept_mark(session.project.state())
    session.source.steer, session.source.plan = "", draft.plan
    session.source.prose = draft.prose
    if not given.extract:
        draft.extraction = Extraction(summary=[draft.plan.title])
    return _land(session, draft, GIVEN_STEPS if given.extract else (), on_stage,
                 summaries=given.extract)


def _check_read(session: Session, draft: TickDraft) -> None:
    """Stop the tick on a scene that cannot be read, or summaries past the last scene."""
    try:
        check_read(draft.tick, draft.unread, draft.tree.last_tick())
    except DamagedBookError:
        session.begun_at = None      # the next try syncs every file again, and sees it again
        raise


def _kept_mark(state: dict[str, Any]) -> dict | None:
    mark = state.get("steer")
    return mark if isinstance(mark, dict) else None


def _land(session: Session, draft: TickDraft, steps: tuple[Step, ...],
          on_stage: OnStage | None, *, summaries: bool = True,
          revise: bool = False) -> TickResult:
    """From a begun draft: the model steps, the commit, then the summaries owed (and with
    `revise`, the outline's revision if the scene closed a chapter off course)."""
    events: list[StageEvent] = []

    def emit(event: StageEvent) -> None:
        events.append(event)
        if on_stage:
            on_stage(event)

    try:
        run_steps(session, draft, on_stage=emit, steps=steps)
        if steps:
            audit(session, draft, emit)
        started = session.clock()
        scene = commit(session, draft)
        emit(StageEvent("commit", session.clock() - started, calls=0))
        crashpoints.hit("after_commit")
    except BaseException:
        _flush_quietly(session)    # a second failure must not hide the first
        raise
    try:
        history.after_tick(session.project, draft.tick, scene.title, scene.words,
                           imported=draft.given is not None, note=draft.note, now=session.now,
                           written=draft.written, seen=session.seen)
        started = session.clock()
        summary = summarize.after_commit(session, draft.tick, memory=draft.memory,
                                         tree=draft.tree) \
            if summaries else None
        if summary is not None:
            summary.seconds = session.clock() - started
            emit(summarize.summary_event(summary))
            history.after_summaries(session.project, summary.made, now=session.now,
                                    seen=session.seen)
        after = _standing_after(session, draft)
        if revise and after is not None and draft.standing is not None:
            draft.notices += revise_outline.at_checkpoint(session, draft.tick, draft.memory,
                                                          draft.standing, after, emit)
        made = [doc.path for doc in summary.made if doc.path] if summary else []
        session.sync_index(draft.memory, paths=draft.written + made)   # the tick's files
        session.flush(sync=False)
        session.landed(draft.memory)
    except (OSError, sqlite3.Error, NovelError) as exc:
        raise CommittedError(f"tick {draft.tick} is committed "
                             f"(scenes/{session.project.scene_path(draft.tick).name}); what "
                             f"failed after it: {explain(exc)}", tick=draft.tick) from exc
    project = session.project
    return TickResult(tick=draft.tick, scene_path=project.scene_path(draft.tick),
                      plan_path=project.plan_path(draft.tick), title=scene.title,
                      words=scene.words, plan=draft.planned, extraction=draft.extracted,
                      tool_results=draft.tool_results, memory_changes=draft.changes,
                      stages=events, summary=summary,
                      reports={stage: b.report for stage, b in draft.built.items()},
                      warnings=list(draft.warnings), notices=draft.notices,
                      fallback=draft.fallback,
                      findings=list(draft.audit.findings) if draft.audit else [],
                      finished=after.finished_line() if after and after.finished else "")


def _standing_after(session: Session, draft: TickDraft) -> BookStanding | None:
    """Where the book stands once the tick has landed (None: a book without an outline)."""
    if draft.standing is None:
        return None
    return read_standing(session.project, session.config.outline.curve, upto=draft.tick,
                         loops=draft.memory.loops)


def audit(session: Session, d: TickDraft, emit: OnStage) -> None:
    """The continuity audit between extract and commit (tick/stages/audit.py): findings,
    the policy of `audit.mode` (a revision kept replaces the prose and the extraction;
    a hold stops the tick, nothing committed), then the scene's knowledge recorded."""
    started = session.clock()
    d.audit = result = audit_stage.run(session, d, lambda ask: _rewrite(session, d, ask))
    d.notices += result.notes
    if result.revised:
        # audit.mode revise: _extract kept memory as it was, the audit the new extraction
        assert d.pre_extract is not None and result.extraction is not None
        memory, kept = d.pre_extract
        d.memory, d.changes = memory, d.changes[:kept]
        d.prose = result.prose
        d.checked = prose_step.check(d.prose, _phrases_before(session, d),
                                     prose_step.phrases_of(d.style),
                                     session.config.style.max_phrase_uses, d.style)
        d.extraction = book_names.guard_extraction(d, result.extraction, d.prose)
        d.extraction, _ = payoff_step.closed_extraction(d.extraction, d.standing)
        session.source.prose = d.prose
        d.changes += extraction_step(d.memory, d.extraction, tick=d.tick, prose=d.prose,
                                     generation=session.config.generation)
    if result.calls:       # the rule checks alone take no time worth a line
        emit(StageEvent("auditor", session.clock() - started,
                        sum(c.prompt_tokens for c in result.calls),
                        sum(c.completion_tokens for c in result.calls),
                        sum(c.cached_tokens for c in result.calls),
                        sum(len(c.completions) for c in result.calls)))
    if result.held:
        path = draft_path(session.project, d.tick)
        atomic_write(path, d.prose + "\n")
        atomic_write(session.project.novel_dir / HELD_FILE,
                     held_text(d.tick, d.planned.title, result.findings, str(path),
                               record=plan_record(d), prose=d.prose))
        lines = [f.line() for f in result.findings]
        raise AuditHoldError(f"tick {d.tick} is held by the continuity audit (audit.mode: "
                             f"hold): {len(lines)} finding(s); nothing is committed, the draft "
                             f"is kept in {path}; {HELD_CHOICES}:"
                             + "".join(f"\n  {line}" for line in lines),
                             tick=d.tick, findings=lines, draft_path=str(path))
    _record_knowledge(session, d)


HELD_CHOICES = ("`novel audit accept` lands it as it is; `novel audit drop` discards it "
                "(fix the story or its memory, and the next tick writes it again); "
                "`novel tick --drop-held` discards it and writes the tick again")


def _record_knowledge(session: Session, d: TickDraft) -> None:
    if session.config.generation.enable_entity_updates:
        changes, d.clock_text = audit_stage.record_knowledge(d.memory,
                                                             session.project.memory_dir, d)
        d.changes += changes


def held_in_the_way(project: Any) -> None:
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


def land_held(session: Session, on_stage: OnStage | None = None) -> TickResult:
    """`novel audit accept`: land the tick `audit.mode: hold` stopped, as it was held, with
    no model called: its plan's tools run again and its extraction is applied to memory
    as it stands (a hand edit made since counts), its findings are recorded with it;
    then the commit, the history entry and the summaries owed, as any tick's. A
    ProjectError says why it cannot be (held_draft). The caller holds the lock."""
    project = session.project
    held = held_draft(project.novel_dir, project.tick() + 1)
    recorded = history.before_tick(project, session.now, seen=session.seen)
    draft = begin(session, tick=held.tick)
    draft.notices[:0] = [*recorded, f"tick {held.tick} was {audit_stage.ACCEPTED}"]
    audit_stage.apply_held(session, draft, held)
    session.source.plan, session.source.prose = draft.plan, draft.prose
    _record_knowledge(session, draft)
    return _land(session, draft, (), on_stage)


LEANER_TRIES = 3      # fits of the writer's prompt to leave room for the audit's revision


def _rewrite(session: Session, d: TickDraft, ask: str) -> tuple[str, Extraction, list[StageCall]]:
    """audit.mode revise: the writer once more, shown its draft with the findings listed
    (its prompt leaner when they would take the answer's room: `_revision`), and its
    draft extracted again (not applied: the audit decides whether it is kept)."""
    budget = session.budget("writer")
    messages = _revision(session, d, ask, budget)
    limit = write.revision_limit(session.counter_of("writer").count_messages(messages), budget,
                                 session.config.generation.scene_min_words)
    prose, wrote = write.run(session.model, messages, max_tokens=limit,
                             min_words=session.config.generation.scene_min_words,
                             max_words=session.config.generation.scene_max_words,
                             title=d.planned.title, room=room_in(session, budget))
    plan = as_told(d.planned)
    session.source.prose = prose
    built = build_extractor(session, story=d.story, memory=d.memory, plan=plan, prose=prose,
                            tick=d.tick, **asked_of(session, d, prose))
    budget = session.budget("extractor")
    extraction, extracted = extract.run(session.model, built.messages,
                                        max_tokens=budget.max_output,
                                        room=room_in(session, budget),
                                        knowledge=session.knowledge, **_asks(session, d, prose))
    return prose, extraction, [wrote, extracted]


def _revision(session: Session, d: TickDraft, ask: str, budget: Budget) -> list[dict[str, str]]:
    """The revise request: the writer's prompt, its draft and the findings. When the
    draft and the findings take the room the answer needs, the writer's prompt is fitted
    anew to leave it (or, if its pinned parts alone take that room, to them alone)."""
    count, prompt = session.counter_of("writer").count_messages, d.built["writer"].messages
    messages = write.revision(prompt, d.prose, ask)
    if budget.left_after(count(messages)) >= budget.max_output:
        return messages
    added = count(messages) - count(prompt)
    for _ in range(LEANER_TRIES):
        try:
            return write.revision(_build_write(session, d, budget.leaving(added)).messages,
                                  d.prose, ask)
        except ContextOverflowError as exc:    # the pinned parts need more: them alone
            added = budget.tokens - exc.need   # (which can move with the budget: again)
    return messages       # write.revision_limit says whether it can be sent as it is


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
    built = draft.built[stage]
    lore = [w for w in draft.lore.problems if w not in built.report.get("warnings", [])]
    built.report["warnings"] = [*built.report.get("warnings", []), *lore]   # as the tick says
    return built
