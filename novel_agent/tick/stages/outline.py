"""The outline made (or rewritten) with the planner's model, one level at a time.

`make_outline` asks for the arc and its ending, then the acts, then each act's
chapters, then each chapter's beats: one call per level, per act, per chapter,
each a prompt fitted to the outline stage's budget (the planner's model and answer
cap: Config.max_tokens) and answered under a JSON schema (story/outline/answers.py),
repaired once (models/ask.py), recorded in the usage ledger as stage "outline".
`regen_outline` rewrites the chapters from one on, and their beats, keeping every
part marked `locked: true` (and all under it), every chapter before it, and the
beats it is told to keep (`rewrite_outline`: those the book's scenes have landed).
A beat the model gives no tension takes the curve's (story/outline/curves.py). `new_outline`
and `rewrite_outline` do it for a project and save the file once every call has
answered, so a failure leaves no outline half made.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from novel_agent.config.settings import OutlineSizes
from novel_agent.context.outline_briefing import outline_briefing
from novel_agent.errors import NovelError, OutlineError, ProjectError
from novel_agent.models.ask import StageCall, ask_json, told
from novel_agent.models.base import StoryView
from novel_agent.story.outline.answers import (
    STAGE,
    arc_from_json,
    begins_cut,
    items_from_json,
    schema,
    short_title,
    title_problem,
)
from novel_agent.story.outline.curves import fill_tensions, target_tension
from novel_agent.story.outline.file import (
    Act,
    Beat,
    Chapter,
    Outline,
    free_id,
    load_outline,
    save_outline,
    spread,
)
from novel_agent.story.scenes import Scene, SceneReader, scene_ticks
from novel_agent.story.summaries import load_tree
from novel_agent.tick.stage_prompts import fit_briefing

if TYPE_CHECKING:
    from novel_agent.tick.session import Session


@dataclass
class OutlineStep:
    """What one level of the outline took: for a progress line."""

    level: str                  # "arc", "acts", "chapters" or "beats"
    made: int = 0               # parts made at this level
    calls: int = 0              # requests (a repair is one more)
    seconds: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    warnings: list[str] = field(default_factory=list)

    def add(self, call: StageCall, made: int) -> None:
        self.made += made
        self.calls += len(call.completions)
        self.seconds += call.seconds
        self.prompt_tokens += call.prompt_tokens
        self.completion_tokens += call.completion_tokens
        if call.warning:
            self.warnings.append(call.warning)


OnStep = Callable[[OutlineStep], None]
Slots = dict[int, list[tuple[str, Beat | None]]]    # chapter -> its beats' ids, kept or to write


class Architect:
    """The calls of one making or rewriting of an outline, on one session."""

    def __init__(self, session: Session, story: Any, curve: str, *, so_far: str = "",
                 on_step: OnStep | None = None, rewrite: bool = False):
        self.session, self.story, self.curve = session, story, curve
        self.so_far, self.on_step, self.rewrite = so_far, on_step, rewrite

    def ask(self, level: str, count: int, values: Mapping[str, Any], shown: Outline | None,
            step: OutlineStep, near: int = 0) -> Any:
        """One call: the answer of `level` for `count` parts, `shown` the outline so far.
        On an embedded local model (the lean session), a part that repeats one of `shown`
        or another of the answer is sent back once; after the repair it stands (an
        outline with a repeat beats none)."""
        job = {"level": level, "count": count, "rewrite": self.rewrite,
               "question": self.session.lean_for(STAGE), **values}
        briefing = outline_briefing(self.story, shown, job, near=near, so_far=self.so_far)
        built = fit_briefing(self.session, briefing, self.session.project.tick(), compare=False)
        budget = self.session.budget(STAGE)
        first = iter((True,))     # the first answer is held to more than its repair
        lean = self.session.lean_for(STAGE)

        def convert(data: dict[str, Any]) -> Any:
            strict = next(first, False)
            if level == "arc":          # one begun mid-word: asked again once
                return arc_from_json(data, strict=strict)
            return items_from_json(level, data, count,
                                   _parts(level, shown) if strict and lean else None,
                                   protagonist=str(getattr(self.story, "protagonist", "") or "")
                                   if strict else None)
        model = told(self.session.model, view=StoryView(story=self.story,
                                                        tick=self.session.tick, job=job))
        answer, call = ask_json(model, STAGE, built.messages, budget.max_output,
                                schema(level, count, question=self.session.lean_for(STAGE)), convert,
                                lambda m: budget.left_after(self.session.counter_of(STAGE).count_messages(m)))
        step.add(call, count)
        if level == "arc":
            cut = [key for key in ("question", "summary", "ending") if begins_cut(getattr(answer, key))]
            if cut:
                step.warnings.append(f"the arc's {' and '.join(cut)} still "
                                     f"{'begins' if len(cut) == 1 else 'begin'} mid-word after a "
                                     "repair: mend it in outline.yaml")
        return answer

    def done(self, step: OutlineStep) -> None:
        if self.on_step is not None and step.calls:
            self.on_step(step)


def make_outline(session: Session, story: Any, sizes: OutlineSizes, curve: str, *,
                 on_step: OnStep | None = None) -> Outline:
    """A new outline of `sizes` for `story`, made level by level (see the module's docstring)."""
    architect = Architect(session, story, curve, on_step=on_step)
    step = OutlineStep("arc")
    arc = architect.ask("arc", 1, {}, None, step)
    architect.done(step)
    step = OutlineStep("acts")
    named = architect.ask("acts", sizes.acts, {}, Outline(arc), step)
    architect.done(step)
    acts, number = [], 0
    for item, count in zip(named, spread(sizes.chapters, sizes.acts)):
        chapters = tuple(Chapter(n, "", "", sizes.scenes) for n in range(number + 1, number + count + 1))
        acts.append(Act(item["name"], item["summary"], chapters))
        number += count
    outline = Outline(arc, tuple(acts))
    slots: Slots = {n: [(f"{n}.{k}", None) for k in range(1, sizes.beats + 1)]
                    for n in range(1, number + 1)}
    return _write(architect, outline, slots)


def regen_outline(session: Session, story: Any, outline: Outline, start: int, curve: str,
                  sizes: OutlineSizes, *, keep: Collection[str] = (), so_far: str = "",
                  on_step: OnStep | None = None) -> Outline:
    """`outline` with the chapters `regen_slots` gives rewritten (titles, purposes and the
    beats not kept). `so_far`: the story written so far, for the model."""
    slots = regen_slots(outline, start, sizes.beats, keep)
    if not slots:
        return outline
    return _write(Architect(session, story, curve, so_far=so_far, on_step=on_step, rewrite=True),
                  outline, slots)


def regen_slots(outline: Outline, start: int, beats: int, keep: Collection[str] = ()) -> Slots:
    """The chapters a rewrite from chapter `start` rewrites, each with its beats' ids and
    the beats kept: every chapter from `start` on but those marked locked (or in a locked
    act) and those whose beats are all kept; the locked beats and those in `keep` (beat
    ids: the ones the book has done) stay in place. A chapter keeps its number of beats
    (one without any gets `beats`). Pure."""
    check_start(outline, start)
    taken = {b.id for b in outline.beats()}
    slots: Slots = {}
    for act in outline.acts:
        for chapter in act.chapters:
            if chapter.number < start or act.locked or chapter.locked:
                continue
            held = [(b.id, b if b.locked or b.id in keep else None) for b in chapter.beats]
            if held and all(beat is not None for _, beat in held):
                continue                       # every beat of it stays: so does the chapter
            slots[chapter.number] = held or [(free_id(chapter.number, k, taken), None)
                                              for k in range(1, beats + 1)]
    return slots


def new_outline(session: Session, *, on_step: OnStep | None = None) -> Outline:
    """Make the project's outline at the configured sizes and curve (small ones on an
    embedded local model) and save it (atomically, once every call has answered): a new
    file, in place of any there was (`novel outline --force`: the history keeps it)."""
    project, config = session.project, session.config.outline
    outline = make_outline(session, project.story(), config.sizes(session.lean_for(STAGE)), config.curve,
                           on_step=on_step)
    save_outline(project.outline_file, outline, fresh=True)
    return outline


@dataclass(frozen=True)
class Rewrite:
    """What `rewrite_outline` did: the outline before and after, the chapters it rewrote."""

    before: Outline
    after: Outline
    chapters: list[int]


def rewrite_outline(session: Session, start: int, *, keep: Collection[str] | None = None,
                    on_step: OnStep | None = None) -> Rewrite:
    """Rewrite the project's outline from chapter `start` on (see regen_outline; the model
    is told the story so far, when the book has an overall summary) and save it, if it
    changed. `keep`: the beats kept; None, the beats its scenes have landed (done or
    partly: landed_beats)."""
    project, config = session.project, session.config.outline
    before = load_outline(project.outline_file)
    if before is None:
        raise ProjectError(f"{project.name} has no outline to rewrite: make one with "
                           f"`novel outline -p {project.name}`", path=str(project.outline_file))
    if keep is None:
        keep = landed_beats(project.scenes_dir)
    sizes = config.sizes(session.lean_for(STAGE))
    tree = load_tree(project.summaries_dir)
    after = regen_outline(session, project.story(), before, start, config.curve, sizes,
                          keep=keep, on_step=on_step,
                          so_far=tree.overall.body if tree.overall is not None else "")
    if after != before:
        save_outline(project.outline_file, after)
    return Rewrite(before, after, sorted(regen_slots(before, start, sizes.beats, keep)))


def landed(scenes: Iterable[Scene | None]) -> set[str]:
    """The beats `scenes` have landed, done or partly: a rewrite or a revision keeps them,
    since the story has told them."""
    return {s.beat for s in scenes if s is not None and s.beat
            and s.beat_status in ("done", "partly")}


def landed_beats(scenes_dir: Path) -> set[str]:
    """The beats the book's scenes have landed (`landed`; one that cannot be read is left
    out)."""
    reader = SceneReader(scenes_dir)

    def read(tick: int) -> Scene | None:
        try:
            return reader(tick)
        except (NovelError, OSError):
            return None
    return landed(map(read, scene_ticks(scenes_dir)))


def check_start(outline: Outline, start: int) -> None:
    """Refuse a rewrite from a chapter the outline does not have."""
    if outline.chapter(start) is None:
        raise OutlineError(f"there is no chapter {start}: the outline has chapters 1–"
                           f"{len(outline.chapters())}", key="--from")


def _write(architect: Architect, outline: Outline, slots: Slots) -> Outline:
    """The chapters of `slots` (chapter -> its beats, kept or None) written: their titles
    and purposes act by act, then the beats of each, the curve filling tensions."""
    total, pending = len(outline.chapters()), set(slots)
    step = OutlineStep("chapters")
    for number, act in enumerate(outline.acts, 1):
        wanted = [c.number for c in act.chapters if c.number in slots]
        if not wanted:
            continue
        values = {"numbers": wanted, "numbers_text": numbers_text(wanted), "act": number,
                  "act_name": act.name, "act_summary": act.summary, "total": total,
                  "ending": outline.arc.ending}
        answers = architect.ask("chapters", len(wanted), values, _without(outline, pending),
                                step, near=wanted[0])
        outline = _with_chapters(outline, {n: replace(
            outline.chapter(n) or Chapter(n, ""), title=answer["title"],
            purpose=answer["purpose"], beats=tuple(b for _, b in slots[n] if b is not None))
            for n, answer in zip(wanted, answers)})
        pending -= set(wanted)
    architect.done(step)
    step = OutlineStep("beats")
    planned = outline.planned_scenes()
    places = [beat_id for c in outline.chapters()     # the book's beats' ids, in order
              for beat_id in ([i for i, _ in slots[c.number]] if c.number in slots
                              else [b.id for b in c.beats])]
    for chapter in outline.chapters():
        held = _ended(architect, outline, chapter.number, slots.get(chapter.number))
        count = sum(beat is None for _, beat in held or [])
        # the book's last beat made of the arc's ending is made, though not asked for (the
        # progress line said "5 beats" of a short story's 6)
        step.made += sum(beat is None for _, beat in slots.get(chapter.number) or []) - count
        if held and not count:
            outline = _with_chapters(outline, {chapter.number: replace(
                chapter, beats=tuple(b for _, b in held if b is not None))})
        if not held or not count:
            continue
        middle = sum(c.scenes for c in outline.chapters() if c.number < chapter.number) \
            + chapter.scenes / 2
        values = {"chapter": chapter.number, "title": chapter.title, "purpose": chapter.purpose,
                  "total": total, "ending": outline.arc.ending,
                  "kept": "; ".join(f"{b.id} {b.what}" for _, b in held if b),
                  "tension": round(target_tension(architect.curve, middle / max(1, planned))),
                  "roles": [beat_role(places.index(beat_id), len(places))
                            for beat_id, beat in held if beat is None]
                  if architect.session.lean_for(STAGE) else []}
        answers = iter(architect.ask("beats", count, values, _without(outline, {chapter.number}),
                                     step, near=chapter.number))    # (its text is the task's)
        beats = tuple(beat or _beat(beat_id, next(answers)) for beat_id, beat in held)
        outline = _with_chapters(outline, {chapter.number: replace(chapter, beats=beats)})
    outline = _titled(outline, {n for n in slots},
                      str(getattr(architect.story, "protagonist", "") or ""))
    architect.done(step)
    return fill_tensions(outline, architect.curve)


def _titled(outline: Outline, numbers: Collection[int], protagonist: str) -> Outline:
    """The chapters `numbers` of `outline` whose title is still no title after a repair
    (`title_problem`) titled from their first beat instead (`short_title`)."""
    new = {c.number: replace(c, title=short_title(c.beats[0].what)) for c in outline.chapters()
           if c.number in numbers and c.beats and title_problem(c.title, protagonist)}
    return _with_chapters(outline, new) if new else outline


def beat_role(index: int, total: int) -> str:
    """What the book's beat `index` (0-based, of `total`) does for a short story's shape,
    for a small model that is told it beat by beat (an embedded 1.5B, asked for a
    chapter's beats, told the ending in the middle of the book and then again): the
    premise's first event, the choice to find out, discoveries in the first half and
    dangers in the second, the climax where the answer is found, the ending. Pure."""
    if index == 0:
        return "the premise's first event, as the premise tells it"
    if index == total - 1:
        return "the ending: the premise's answer told plainly, and what it changes"
    if index == total - 2:
        return "the climax: the protagonist faces the heart of the premise and finds its answer"
    if index == 1:
        return "the protagonist chooses to find out: a first step toward the premise's answer"
    if index / max(1, total - 1) < 0.5:
        return "a discovery: a clue to the premise's question comes out, and a new question with it"
    return "a danger or a reversal: finding out costs the protagonist, or someone stands in the way"


def _ended(architect: Architect, outline: Outline, number: int,
           held: list[tuple[str, Beat | None]] | None) -> list[tuple[str, Beat | None]] | None:
    """Chapter `number`'s beats to write (`held`), the book's last beat, when it is to be
    written on an embedded local model, made the arc's ending: the 1.5B, told its last
    beat ends the book, went on with the middle ("She faces challenges and obstacles
    along the way"), and the book would have ended there."""
    chapters = outline.chapters()
    if not (held and architect.session.lean_for(STAGE) and chapters and number == chapters[-1].number
            and held[-1][1] is None and outline.arc.ending):
        return held
    beat_id = held[-1][0]
    return [*held[:-1], (beat_id, Beat(beat_id, outline.arc.ending))]


def _parts(level: str, outline: Outline | None) -> list[dict[str, Any]]:
    """The parts of `level` that `outline` holds, as an answer gives them (for `repeats`)."""
    if outline is None:
        return []
    if level == "acts":
        return [{"name": a.name, "summary": a.summary} for a in outline.acts]
    if level == "chapters":
        return [{"title": c.title, "purpose": c.purpose} for c in outline.chapters()]
    return [{"what": b.what} for b in outline.beats()]


def _beat(beat_id: str, answer: Mapping[str, Any]) -> Beat:
    return Beat(beat_id, answer["what"], answer.get("tension"))


def _with_chapters(outline: Outline, new: Mapping[int, Chapter]) -> Outline:
    """The outline with the chapters of `new` (by number) in place of its own."""
    return replace(outline, acts=tuple(replace(a, chapters=tuple(
        new.get(c.number, c) for c in a.chapters)) for a in outline.acts))


def _without(outline: Outline, pending: set[int]) -> Outline:
    """The outline as decided so far: the chapters still to write left out."""
    return replace(outline, acts=tuple(replace(a, chapters=tuple(
        c for c in a.chapters if c.number not in pending)) for a in outline.acts))


def numbers_text(numbers: list[int]) -> str:
    """"5", "5 and 6", "5 to 8" or "5, 7 and 8"."""
    if len(numbers) > 2 and numbers == list(range(numbers[0], numbers[-1] + 1)):
        return f"{numbers[0]} to {numbers[-1]}"
    if len(numbers) == 1:
        return str(numbers[0])
    return f"{', '.join(map(str, numbers[:-1]))} and {numbers[-1]}"
