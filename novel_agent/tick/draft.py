"""The draft a tick hands from step to step, and what every step is handed with it.

A tick is a list of steps (tick/pipeline.py): each takes the `TickDraft` the step
before it returned and returns a new one (`dataclasses.replace`), never changing the
one it was given, so what a step made is what the next one is shown, and an earlier
draft is still there to go back to (the audit's revision starts again from the draft
before the extraction).

One part is not copied: `memory`, the tick's working memory (story/memory/kept.py:
handed out by the session, only the files that changed read again; copied whole, it
costs more than the rest of reading at hundreds of characters). The steps that change
memory (the plan's tools, the extraction, what the audit records, the payoffs) change
it in place and return the draft with their lines; the extraction, when the audit may
revise the scene, keeps a copy of memory as it was in the draft it leaves to go back
to (`undo`).

What the tick read before its first step (`Start`) no step changes. `view()` is where
the story stands as a request goes out (models/base.StoryView), for a model that
answers from the story rather than its prompt (the offline model): made from the draft
each time a stage asks, it is never out of step with it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from novel_agent.audit.findings import Finding
from novel_agent.audit.result import AuditResult
from novel_agent.config.budget import Budget
from novel_agent.config.settings import Config
from novel_agent.models.ask import Room, told
from novel_agent.models.base import ChatModel, StoryView
from novel_agent.story.decisions import Extraction, Plan
from novel_agent.story.lore import Lorebook
from novel_agent.story.memory.records import Loop
from novel_agent.story.memory.store import Memory
from novel_agent.story.name_pool import NamePool
from novel_agent.story.outline.payoffs import final_act
from novel_agent.story.outline.standing import BookStanding
from novel_agent.story.project.folder import Project, Story
from novel_agent.story.scenes import Scene, SceneReader
from novel_agent.story.summaries import SummaryTree
from novel_agent.tick import prose_step
from novel_agent.tick.events import OnStage, StageEvent
from novel_agent.tick.prose_step import Checked
from novel_agent.tick.stage_prompts import Built
from novel_agent.tick.stages.summarize import SummaryReport

if TYPE_CHECKING:
    from novel_agent.tick.session import Session


@dataclass(frozen=True)
class Start:
    """What a tick began from, read once before its first step (pipeline.begin)."""

    tick: int
    story: Story
    before: Memory             # memory as the files hold it (never changed: story/memory/kept.py)
    scenes: SceneReader
    tree: SummaryTree          # the summary tree the tick began with (it writes none)
    lore: Lorebook
    style: Mapping[str, Any] | None         # the project's style.yaml (story/style.py)
    standing: BookStanding | None           # where the book stands: a book with an outline
    steer: str = ""            # the author's note in force ("" when none), a redo's note after it
    steer_mark: Mapping[str, Any] | None = None   # what state.yaml keeps of a `ticks:` note
    note: str = ""             # a one-tick note (`novel redo --note`), for the history
    unread: Mapping[str, str] = field(default_factory=dict)   # scenes that cannot be read: why
    recent: int = 0            # style.recent_scenes: the scenes `phrases` counts over

    @cached_property
    def phrases(self) -> Counter[str]:
        """The slop list's phrases in the last `recent` scenes (prose_step), counted once."""
        scenes = self.scenes.recent(self.tick - 1, self.recent) if self.recent else []
        return prose_step.counted([s.body for s in scenes], prose_step.phrases_of(self.style))


@dataclass(frozen=True)
class GivenScene:
    """A scene whose plan and prose are given, not planned and written (an imported
    piece): the sequence of `pipeline.land_given`."""

    tick: int
    prose: str
    plan: Callable[[Memory, Story], Plan]     # the scene's plan, from memory as it stands
    # after a usable extraction, before it is applied: who it introduces is created in
    # the draft's memory; returns what changed (one line each) and the plan settled
    introduce: Callable[[TickDraft], tuple[list[str], Plan]] | None = None
    extract: bool = True      # False: no model call; the title is the summary, no summaries
    record: Mapping[str, Any] = field(default_factory=dict)   # added to the plan record
    state: Mapping[str, Any] = field(default_factory=dict)    # added to state.yaml


@dataclass(frozen=True)
class TickDraft:
    """One tick in progress: what it began from, and what each step has made so far."""

    start: Start
    memory: Memory                               # the tick's working memory (see above)
    given: GivenScene | None = None              # an imported piece's plan and prose
    notices: tuple[str, ...] = ()                # what the user should know: one line each
    warnings: tuple[str, ...] = ()               # what the plan record keeps: names rejected...
    built: Mapping[str, Built] = field(default_factory=dict)   # each stage's prompt, as sent
    plan: Plan | None = None
    tool_results: tuple[str, ...] = ()
    cast_named: Mapping[str, Any] | None = None  # the POV and cast as the planner named them,
                                                 # when memory names them otherwise
    pool: NamePool | None = None                 # the book's names (names.yaml), read or made
    pool_text: str = ""                          # names.yaml's text, when this tick made it
    prose: str = ""
    checked: Checked | None = None               # what the prose check found of the scene
    rewritten: str = ""                          # which draft was kept, when written again
    mended: int = 0                              # stale sentences written again
    mends: tuple[tuple[str, str], ...] = ()      # each of them: (before, after)
    extraction: Extraction | None = None
    fallback: str = ""                           # why the summary came from the prose, if it did
    changes: tuple[str, ...] = ()                # what changed in memory, one line each
    undo: TickDraft | None = None                # the draft before the extraction, its memory
                                                 # a copy (audit.mode revise: the revision)
    audit: AuditResult | None = None             # the continuity audit's findings
    clock_text: str = ""                         # memory/clock.yaml's new text, if it moved
    payoffs: Mapping[str, Loop] = field(default_factory=dict)   # set at commit: loop id -> what was set
    scene: Scene | None = None                   # the scene, once committed
    written: tuple[Path, ...] = ()               # the files the commit wrote or removed
    answers: Mapping[str, Any] = field(default_factory=dict)   # a stage of a plugin's or
                                                 # a test's answer, by stage: plan records keep it
    summary: SummaryReport | None = None         # the summaries made after the commit
    finished: str = ""                           # "the book is finished: …", when it is

    @property
    def tick(self) -> int:
        return self.start.tick

    @property
    def story(self) -> Story:
        return self.start.story

    @property
    def scenes(self) -> SceneReader:
        return self.start.scenes

    @property
    def standing(self) -> BookStanding | None:
        return self.start.standing

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

    def told(self, *notices: str) -> TickDraft:
        """The draft with `notices` added ("" ones left out)."""
        said = tuple(n for n in notices if n)
        return replace(self, notices=self.notices + said) if said else self

    def warned(self, *warnings: str) -> TickDraft:
        """The draft with `warnings` added ("" ones left out)."""
        said = tuple(w for w in warnings if w)
        return replace(self, warnings=self.warnings + said) if said else self

    def with_built(self, built: Built) -> TickDraft:
        """The draft with `built` as its stage's prompt."""
        return replace(self, built={**self.built, built.stage: built})

    def view(self, min_words: int, max_words: int) -> StoryView:
        """Where the story stands now, for a request (see the module's docstring)."""
        at = self.standing
        return StoryView(story=self.story, memory=self.memory, tick=self.tick, plan=self.plan,
                         prose=self.prose, min_words=min_words, max_words=max_words,
                         steer=self.start.steer,
                         target_tension=at.target if at else None,
                         due=tuple(str(loop.get("id")) for loop in at.due) if at else (),
                         no_new_loops=at is not None and final_act(at.outline, at.position))


@dataclass(frozen=True)
class TickContext:
    """What every step of one tick is handed besides the draft: the session (its project,
    configuration, models, budgets and clocks) and where a stage's event goes."""

    session: Session
    emit: OnStage = lambda event: None

    @property
    def config(self) -> Config:
        return self.session.config

    @property
    def project(self) -> Project:
        return self.session.project

    def model(self, d: TickDraft, built: Built | None = None) -> ChatModel:
        """The session's model, its requests told where the story stands (`d`) and, for
        those made from `built`, where its prompt's stable and growing prefixes end."""
        gen = self.config.generation
        return told(self.session.model, view=d.view(gen.scene_min_words, gen.scene_max_words),
                    stable=built.stable_prefix if built else 0,
                    growing=built.growing_prefix if built else 0)

    def budget(self, stage: str) -> Budget:
        return self.session.budget(stage)

    def room(self, stage: str, budget: Budget | None = None) -> Room:
        """Tokens `stage`'s window leaves for an answer after a request's messages (for a
        continuation or a repair, which are longer than the fitted prompt)."""
        budget = budget or self.budget(stage)
        count = self.session.counter_of(budget.stage).count_messages
        return lambda messages: budget.left_after(count(messages))


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
    summary: SummaryReport | None = None   # checkpoints made after the commit
    reports: dict[str, dict[str, Any]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)  # names rejected, ...
    notices: list[str] = field(default_factory=list)   # recovery done, warnings: one line each
    fallback: str = ""     # why the extractor's answer was not used (its summary: the prose's)
    findings: list[Finding] = field(default_factory=list)   # the continuity audit's
    finished: str = ""     # "the book is finished: …" when the tick landed the outline's last beat
