"""Stage 5, summarize: checkpoints, arcs and the overall summary, checked for faithfulness.

After tick T commits, `after_commit` makes the checkpoints owed (every
`checkpoint_summary_interval` ticks, and any left pending by a failed call),
extends the overall summary with what is new, and rolls the oldest roots of
the tree up into arcs while tier 3 does not fit its share (see summaries.py).
A checkpoint or arc is checked against the memory of its range (characters
who appeared, loops opened or resolved, facts established); if it leaves any
out the summarizer is asked once more, naming them, and the coverage is
recorded. An answer cut off by `llm.summarizer_max_tokens` (finish_reason
"length") is continued, up to MAX_CONTINUATIONS times, each continuation a
prompt fitted like the first (the draft so far pinned in it); still cut off, it
is trimmed to its last complete sentence or bullet. Either way the report says
so: a summary is never written mid-word without a note. A summarizer failure
never undoes the tick: the checkpoint stays pending in `.novel/state.yaml` and
is made at the next tick (or by `novel summarize`). A hand-edited summary is
never overwritten unless rebuilt.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

from novel_agent.context import Briefing, Section
from novel_agent.context.builders import summaries_briefing, summarizer_briefing
from novel_agent.context.tier3 import doc_cost, tier3_budget
from novel_agent.errors import (
    ContextOverflowError,
    ModelError,
    ModelResponseError,
    ProjectError,
    SummarizeError,
)
from novel_agent.files import atomic_write
from novel_agent.models.ask import StageCall, ask_text, continued, told
from novel_agent.models.base import StoryView
from novel_agent.story.faithfulness import Mention, arc_items, coverage, range_items
from novel_agent.story.memory.read import load_memory
from novel_agent.story.memory.store import Memory
from novel_agent.story.scenes import Scene, load_scenes, scene_key
from novel_agent.story.summaries import (
    OVERALL,
    SummaryDoc,
    SummaryTree,
    load_doc,
    load_tree,
    pending_ticks,
    record_pending,
    write_doc,
)
from novel_agent.text.cleanup import unwrap
from novel_agent.tick.events import StageEvent
from novel_agent.tick.prompt_log import log_path, log_text
from novel_agent.tick.stage_prompts import Built, build_summary

if TYPE_CHECKING:
    from novel_agent.tick.session import Session

log = logging.getLogger(__name__)
ARC_FANOUT = 4        # an arc condenses at most this many of the oldest roots of one level
MAX_LEVEL = 4         # no arc above this level: a tree of at most 4**4 checkpoints under a root
MAX_PER_TICK = 3      # checkpoints a tick makes; the rest stay pending
MAX_CONTINUATIONS = 2  # more calls for an answer cut off by the token limit
_COMPLETE = re.compile(r"[.!?…][\"'”’)\]*_]*(?=\s|$)|\n")   # where a sentence or a line ends


# -- the stage ---------------------------------------------------------------------


@dataclass(frozen=True)
class SummaryJob:
    """What one summarizer call is asked to condense (its request's view: a model that
    answers from the story rather than its prompt, the offline one, names what it lists)."""

    kind: str                       # "checkpoint", "arc" or "overall"
    first: int
    last: int
    items: list[tuple[str, str]] = field(default_factory=list)   # (kind, label) to name
    previous: str = ""              # the overall summary so far ("overall" only)
    new: list[str] = field(default_factory=list)                  # new summaries' bodies


@dataclass
class SummaryReport:
    """What a summarize step did (its progress event: `summary_event`)."""

    stage: str = "summarizer"
    seconds: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    calls: int = 0
    made: list[SummaryDoc] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)      # hand-edited, respected
    pending: list[int] = field(default_factory=list)      # checkpoints still owed
    warnings: list[str] = field(default_factory=list)
    failure: SummarizeError | None = None                 # why it stopped, if it did


def summary_event(report: SummaryReport) -> StageEvent:
    """The progress event of a summarize step."""
    return StageEvent("summarizer", report.seconds, report.prompt_tokens, report.completion_tokens,
                      report.cached_tokens, report.calls, warnings=tuple(report.warnings),
                      failure=str(report.failure) if report.failure is not None else "")


class Summarizer:
    """Makes summary files for one project; every call is counted in `report`."""

    def __init__(self, session: Session, memory: Memory | None = None,
                 tick: int | None = None):
        """`tick`: the last committed tick, when the caller knows it (else read from the
        scenes folder, a listing of every scene)."""
        self.session = session
        self.project, self.config = session.project, session.config
        self.counter, self.now = session.counter_of("summarizer"), session.now
        self.report = SummaryReport()
        self.story = self.project.story()
        self.tick = self.project.tick() if tick is None else tick
        self._memory = memory
        self._job: SummaryJob | None = None     # what the call in progress is asked

    @property
    def memory(self) -> Memory:
        if self._memory is None:
            self._memory = load_memory(self.project.memory_dir)
        return self._memory

    def tree(self) -> SummaryTree:
        """The summary tree as the files hold it now (parsed files cached by the session)."""
        return load_tree(self.project.summaries_dir, self.session.docs)

    def _ask(self, context: Briefing, name: str, job: SummaryJob,
             items: list[Mention]) -> tuple[str, float, list[Mention], str]:
        """Ask for a summary; if it leaves items out, ask once more naming them.
        Both prompts are fitted to the summarizer's budget and logged."""
        self._job = job
        text, model = self._call(context, name)
        share, missing = coverage(text, items)
        for named in _fewer(missing):      # all it left out, or as many as the window holds
            try:
                again, model2 = self._call(_with_feedback(context, text, named), name + "_retry")
            except ContextOverflowError:
                if len(named) == 1:
                    self.report.warnings.append(
                        f"{name}: no second summarizer call: the window leaves no room for the "
                        "first answer and what it left out")
                continue
            except ModelError as exc:
                self.report.warnings.append(f"second summarizer call failed: {exc}")
            else:
                share2, missing2 = coverage(again, items)
                if share2 >= share:
                    text, share, missing, model = again, share2, missing2, model2
            break
        return text, share, missing, model

    def _call(self, context: Briefing, name: str) -> tuple[str, str]:
        """One summary: asked, continued while cut off, trimmed if still cut off."""
        text, call = self._send(context, name)
        asked = 0

        def more(text: str) -> str | None:
            nonlocal call, asked
            asked += 1
            try:
                got, call = self._send(_continuing(context, text), f"{name}_more{asked}")
            except (ModelError, ContextOverflowError) as exc:   # trimmed below
                self.report.warnings.append(f"{name}: continuing a cut-off summary failed: "
                                            f"{exc}")
                return None
            return got

        text, _ = continued(text, lambda _: call.completions[-1].finish_reason == "length",
                            more, MAX_CONTINUATIONS)
        cut = call.completions[-1].finish_reason == "length"
        if asked or cut:
            self.report.warnings.append(self._cut_note(name, asked, cut))
        text = trim_summary(text, name) if cut else text
        return unwrap(text), call.completions[-1].model or self.session.stage("summarizer").limits.model

    def _send(self, context: Briefing, name: str) -> tuple[str, StageCall]:
        """Fit, log and send one summarizer prompt; the answer as sent back (unstripped)."""
        built = build_summary(self.session, context, self.tick)
        self._log(built, name)
        view = StoryView(story=self.story, tick=self.session.tick,
                         job=asdict(self._job) if self._job is not None else {})
        model = told(self.session.model, stable=built.stable_prefix, view=view)
        _, call = ask_text(model, "summarizer", built.messages,
                           self.session.budget("summarizer").max_output)   # as fitted
        r = self.report
        r.calls += len(call.completions)
        r.prompt_tokens += call.prompt_tokens
        r.completion_tokens += call.completion_tokens
        r.cached_tokens += call.cached_tokens
        return call.completions[-1].text, call

    def _cut_note(self, name: str, more: int, cut: bool) -> str:
        limit = self.config.max_tokens("summarizer")
        how = (f"still cut off after {more} continuation{'s' * (more != 1)}: trimmed to its "
               "last complete sentence" if cut else
               f"continued ({more} more call{'s' * (more != 1)})")
        return (f"{name}: the summarizer's answer was cut off at the {limit}-token limit; "
                f"{how} (raise llm.summarizer_max_tokens)")

    def _log(self, built: Built, name: str) -> None:
        atomic_write(log_path(self.project, self.tick, f"summarizer_{name}"), log_text(built.report, built.messages))

    def _meta(self, kind: str, level: int, first: int, last: int, body: str, model: str,
              **extra: Any) -> dict[str, Any]:
        ids = [scene_key(t) for t in range(first, last + 1)
               if self.project.scene_path(t).is_file()]
        return {"kind": kind, "level": level, "first": first, "last": last, "scenes": ids,
                **extra, "tokens": self.counter.count(body.strip()), "model": model,
                "created": self.now().isoformat(timespec="seconds")}

    def _check(self, name: str, share: float, missing: list[Mention]) -> dict[str, Any]:
        floor = self.config.context.summary_min_coverage
        if share < floor:
            message = (f"{name} names {share:.0%} of what its range established (below "
                       f"summary_min_coverage {floor:.0%}); missing: "
                       + "; ".join(i.label for i in missing[:8]))
            self.report.warnings.append(message)
            log.warning(message)
        return {"coverage": round(share, 3), "missing": [i.label for i in missing]}

    def checkpoint(self, tick: int, first: int) -> SummaryDoc:
        """Condense scenes first..tick into summaries/checkpoint_TTT.md."""
        scenes = load_scenes(self.project.scenes_dir, list(range(first, tick + 1)))
        if not scenes:
            raise ProjectError(f"no scenes in ticks {first}–{tick} to summarize",
                               path=str(self.project.scenes_dir))
        items = range_items(self.memory, scenes, first, tick)
        previous = self._overall_text(before=first)
        name = f"checkpoint_{tick:03d}"
        context = self._scenes_context(scenes, first, tick, previous)
        job = SummaryJob("checkpoint", first, tick, [(i.kind, i.label) for i in items])
        text, share, missing, model = self._ask(context, name, job, items)
        source = sum(self.counter.count(s.body) for s in scenes)
        meta = self._meta("checkpoint", 0, first, tick, text, model, source_tokens=source,
                          **self._check(name, share, missing))
        return self._made(write_doc(self.project.summaries_dir / f"{name}.md", meta, text))

    def arc(self, tree: SummaryTree, children: list[SummaryDoc], name: str | None = None) -> SummaryDoc:
        """Condense `children` (consecutive roots) into a new arc (or rewrite arc `name`)."""
        first, last = children[0].first, children[-1].last
        scenes = load_scenes(self.project.scenes_dir, list(range(first, last + 1)))
        items = arc_items(range_items(self.memory, scenes, first, last), children)
        context = self._docs_context(children, first, last, self._overall_text(before=first),
                                     "arc")
        if name is None:
            numbers = [int(d.name.split("_")[1]) for d in tree.docs.values() if d.kind == "arc"]
            name = f"arc_{max(numbers, default=0) + 1:03d}"
        job = SummaryJob("arc", first, last, [(i.kind, i.label) for i in items])
        text, share, missing, model = self._ask(context, name, job, items)
        level = max(c.level for c in children) + 1
        source = sum(int(c.meta.get("source_tokens") or 0) for c in children)
        meta = self._meta("arc", level, first, last, text, model, covers=[c.name for c in children],
                          source_tokens=source, **self._check(name, share, missing))
        return self._made(write_doc(self.project.summaries_dir / f"{name}.md", meta, text))

    def overall(self, tree: SummaryTree, rebuild: bool = False) -> SummaryDoc | None:
        """Extend overall.md with the roots newer than it (from the roots alone on rebuild)."""
        current = None if rebuild else tree.overall
        done = current.last if current else 0
        if tree.last_tick() <= done:
            return None
        if current is not None and current.edited:
            self.report.skipped.append("overall")
            return None
        new = [d for d in tree.roots() if d.last > done]
        previous = current.body if current else ""
        context = self._docs_context(new, done + 1, tree.last_tick(), previous, OVERALL)
        job = SummaryJob(OVERALL, done + 1, tree.last_tick(), [], previous,
                         [d.body for d in new])
        text, _, _, model = self._ask(context, OVERALL, job, [])
        meta = self._meta(OVERALL, -1, 1, tree.last_tick(), text, model)
        meta.pop("scenes")
        return self._made(write_doc(self.project.summaries_dir / "overall.md", meta, text))

    def roll_up(self, tree: SummaryTree) -> SummaryTree:
        """While tier 3's roots do not fit their budget, condense the oldest roots into arcs."""
        budget, count = tier3_budget(self.config, self.session.stage("writer").limits), self.counter.count
        while not fits(tree, budget, count):
            group = next_group(tree)
            if not group:
                self.report.warnings.append(
                    f"the summaries' top level does not fit tier 3's {budget} tokens and no "
                    f"level under {MAX_LEVEL} can be rolled up: tier 3 leaves the oldest out")
                break
            self.arc(tree, group)
            tree = self.tree()
        return tree

    def _overall_text(self, before: int) -> str:
        """The overall summary, if it ends before tick `before` (else it would tell the future)."""
        path = self.project.summaries_dir / "overall.md"
        doc = load_doc(path, 0, self.session.docs) if path.is_file() else None
        return doc.body if doc is not None and doc.last < before else ""

    def _made(self, doc: SummaryDoc) -> SummaryDoc:
        self.report.made.append(doc)
        return doc

    def _scenes_context(self, scenes: list[Scene], first: int, last: int, previous: str) -> Briefing:
        """The scenes of the range: each in full text where the share allows, else its
        bullets (the engine degrades the items, then cuts middle-out as a last resort)."""
        return summarizer_briefing(self.story, scenes, first=first, last=last,
                                   shares=self.config.context.summarizer_shares,
                                   previous=previous)

    def _docs_context(self, docs: list[SummaryDoc], first: int, last: int, previous: str,
                      kind: str) -> Briefing:
        """Summaries to condense into an arc or the overall summary."""
        return summaries_briefing(self.story, docs, first=first, last=last,
                                  shares=self.config.context.summarizer_shares,
                                  previous=previous, kind=kind)


def _continuing(context: Briefing, draft: str) -> Briefing:
    """The same briefing with the cut-off draft pinned (in place of the first answer, in
    a second try's: `_with_feedback`); the template asks for the rest (`continuing`)."""
    section = Section("draft", "Your summary so far", draft.strip(), pinned=True)
    if any(s.name == "draft" for s in context.fixed):
        return replace(context, fixed=tuple(section if s.name == "draft" else s
                                            for s in context.fixed)).with_values(continuing=True)
    return context.with_fixed(section).with_values(continuing=True)


def trim_summary(text: str, name: str = "summary") -> str:
    """A cut-off summary up to its last complete sentence or line; ModelResponseError
    when not one of them ended."""
    text = text.rstrip()
    ends = [m.end() for m in _COMPLETE.finditer(text)]
    kept = text[:ends[-1]].rstrip() if ends else ""
    if not kept.strip(" -*\n"):
        raise ModelResponseError(f"summarizer: {name} was cut off before its first sentence "
                                 "ended (raise llm.summarizer_max_tokens)", stage="summarizer",
                                 raw=text)
    return kept


def _fewer(missing: list[Mention]) -> list[list[Mention]]:
    """What a second try names, longest first: all of `missing`, then its first half, and
    so on down to its first (none when nothing is missing)."""
    out: list[list[Mention]] = []
    n = len(missing)
    while n:
        out.append(missing[:n])
        n //= 2
    return out


def _with_feedback(context: Briefing, draft: str, missing: list[Mention]) -> Briefing:
    """The same briefing, with the first answer and what it left out, for one more try."""
    note = ("It leaves out: " + "; ".join(i.label for i in missing) +
            ". Write it again, 3 to 5 bullets, naming each of them.")
    return context.with_fixed(Section("draft", "Your summary", draft.strip(), pinned=True),
                              Section("missing", "What it must also name", note, pinned=True))


def fits(tree: SummaryTree, budget: int, count: Callable[[str], int]) -> bool:
    """Do the roots fit `budget` tokens together? (Tier 3 holds a cut through the tree,
    never the overall summary next to it.)"""
    return sum(doc_cost(d, count) for d in tree.roots()) <= budget


def next_group(tree: SummaryTree) -> list[SummaryDoc]:
    """The roots to roll up next: the oldest ARC_FANOUT roots of the lowest level that
    has that many, else the oldest (up to ARC_FANOUT) of the lowest level with two or
    more; never roots of different levels, and never into a level above MAX_LEVEL, so
    the tree's fan-in and depth stay bounded ([] when no level can be rolled up: tier 3
    then leaves the oldest roots out). Roots are oldest at the highest level, so every
    group is a run of consecutive ticks."""
    roots = tree.roots()
    levels = sorted({d.level for d in roots if d.level < MAX_LEVEL})
    for need in (ARC_FANOUT, 2):
        for level in levels:
            same = [d for d in roots if d.level == level]
            if len(same) >= need:
                return same[:ARC_FANOUT]
    return []


def _failed(s: Summarizer, message: str, exc: ModelError, *, checkpoint: int | None = None,
            pending: list[int] | None = None) -> None:
    """Record why the summarizer stopped, the model's error chained as the cause."""
    failure = SummarizeError(f"{message}: {exc}", checkpoint=checkpoint,
                             pending=pending if pending is not None else s.report.pending)
    failure.__cause__ = exc
    s.report.failure = failure
    log.warning("%s", failure)


def make_checkpoints(s: Summarizer, ticks: list[int]) -> list[int]:
    """Make the checkpoints at `ticks` in order; return those still owed after a failure."""
    for index, tick in enumerate(ticks):
        tree = s.tree()
        if tick <= tree.last_tick():
            continue
        first = tree.last_tick() + 1
        try:
            s.checkpoint(tick, first)
        except ModelError as exc:
            _failed(s, f"checkpoint {tick} is pending: the summarizer failed", exc,
                    checkpoint=tick, pending=ticks[index:])
            return ticks[index:]
    return []


def after_commit(session: Session, tick: int, *, memory: Memory | None = None,
                 tree: SummaryTree | None = None) -> SummaryReport | None:
    """After tick `tick` commits: make owed checkpoints (at most MAX_PER_TICK), extend
    the overall summary, roll up arcs. A model failure is recorded in the report
    (`failure`), not raised: the checkpoint stays pending. None when there was nothing
    to do. `memory`, the memory just committed, and `tree`, the summary tree the tick
    began with (a tick writes no summary), spare reading them again."""
    s = Summarizer(session, memory, tick)
    tree = tree if tree is not None else s.tree()
    owed = pending_ticks(s.project, s.config, tree, tick=tick)
    overall_done = tree.overall is not None and (tree.overall.edited or
                                                 tree.overall.last >= tree.last_tick())
    budget = tier3_budget(s.config, session.stage("writer").limits)
    if not owed and (overall_done or tree.last_tick() == 0) and (
            fits(tree, budget, s.counter.count) or not next_group(tree)):
        return None
    _run(s, owed[:MAX_PER_TICK], owed[MAX_PER_TICK:])
    return s.report


def summarize_project(session: Session, *, checkpoint: int | None = None,
                      rebuild: bool = False) -> SummaryReport:
    """`novel summarize`: make the owed checkpoints (default), remake one checkpoint
    (`checkpoint`), or rebuild every summary, hand edits included (`rebuild`).
    A model failure stops it and is in the report's `failure`."""
    s = Summarizer(session)
    session.at_tick(s.tick)
    project, config = session.project, session.config
    tree = s.tree()
    if checkpoint is not None:
        if not _remake_checkpoint(s, tree, checkpoint):
            s.report.pending = pending_ticks(project, config)
            return s.report
        _run(s, [], pending_ticks(project, config))    # the others stay owed
        return s.report
    if rebuild:
        try:
            _rebuild(s, tree)
        except ModelError as exc:
            s.report.pending = pending_ticks(project, config)
            _failed(s, "rebuild stopped: the summarizer failed", exc)
            return s.report
    _run(s, pending_ticks(project, config), [], rebuild=rebuild)
    return s.report


def _run(s: Summarizer, now_ticks: list[int], later: list[int], rebuild: bool = False) -> None:
    still = make_checkpoints(s, now_ticks) + later
    record_pending(s.project, still)
    s.report.pending = still
    if s.report.failure is not None:
        return
    try:
        s.overall(s.tree(), rebuild=rebuild)
        s.roll_up(s.tree())
    except ModelError as exc:
        _failed(s, "the summarizer failed (retried at the next tick)", exc)


def _remake_checkpoint(s: Summarizer, tree: SummaryTree, tick: int) -> bool:
    if not 1 <= tick <= s.project.tick():
        raise ProjectError(f"no tick {tick} to summarize: the last tick is {s.project.tick()}",
                           path=str(s.project.scenes_dir))
    existing = tree.docs.get(f"checkpoint_{tick:03d}")
    inside = [d for d in tree.checkpoints() if d.first <= tick <= d.last and d is not existing]
    if inside:
        raise ProjectError(f"tick {tick} is inside {inside[0].name} (ticks "
                           f"{inside[0].first}–{inside[0].last})", path=str(inside[0].path))
    if existing is not None and existing.edited:
        s.report.skipped.append(existing.name)
        return True
    first = existing.first if existing else max(
        (d.last for d in tree.checkpoints() if d.last < tick), default=0) + 1
    try:
        s.checkpoint(tick, first)
    except ModelError as exc:
        _failed(s, f"checkpoint {tick} failed", exc, checkpoint=tick)
        return False
    return True


def _rebuild(s: Summarizer, tree: SummaryTree) -> None:
    """Remake every checkpoint and arc in place (same ranges, same covers), bottom up."""
    for doc in tree.checkpoints():
        s.checkpoint(doc.last, doc.first)
    arcs = sorted((d for d in tree.docs.values() if d.kind == "arc"),
                  key=lambda d: (d.level, d.first))
    for arc in arcs:
        fresh = s.tree()
        s.arc(fresh, fresh.children(fresh.docs[arc.name]), name=arc.name)
