"""Where a book with an outline stands, from its scenes: what a tick follows, and its end.

Each scene of a book with an outline says the chapter it belongs to, the beat its
plan advanced, whether that beat happened and its tension (story/scenes.py), so
the scenes alone say where the book stands (position.tally, position):
`book_standing` adds the target tension of the next scene and the tension the last
scenes realized. The target is the current beat's tension (its own, or the
curve's at its place in the book when it has none: curves.fill_tensions); a
chapter without a beat takes the curve's at the scene's place. `read_standing`
reads the outline and the scenes of a project; a book without an outline has no
standing (None), and is written as it always was. When the last beat lands the
book is `finished`: `check_unfinished` stops a tick with a BookFinishedError.

Given the book's loops (`loops`: read_standing reads memory's), the standing also
says which are due (story/outline/payoffs.py) and holds the end back while loops wait for
their payoff: the outline's last beat landed with loops neither resolved nor kept
open, the book takes up to FINALE_SCENES ending scenes more (in its last chapter,
the planner shown those loops as to be paid off now), never past STRETCH times its
planned scenes, so it always ends; then it is finished, and its finished line says
how many loops were left open and which were kept open on purpose.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from novel_agent.errors import BookFinishedError, NovelError
from novel_agent.story.memory.read import load_memory
from novel_agent.story.memory.records import Loop
from novel_agent.story.outline.curves import fill_tensions, target_tension
from novel_agent.story.outline.file import Beat, Outline, load_outline
from novel_agent.story.outline.payoffs import due, left_open
from novel_agent.story.outline.position import STRETCH, Position, position, tally
from novel_agent.story.scenes import Scene, SceneReader, scene_ticks

REALIZED_SHOWN = 5      # the last scenes whose realized tension the planner is shown
GO_ON = "extend the outline (novel outline edit, or novel outline regen) to go on"
FINALE_SCENES = 3       # ending scenes past the last beat, at most, to pay off the loops left


@dataclass(frozen=True)
class BookStanding:
    """Where the next scene of a book with an outline goes, and how tense it should be."""

    outline: Outline                 # with every beat's tension (the curve's where none)
    position: Position               # where in the outline the next scene falls
    target: int                      # the next scene's target tension, 0-10
    realized: tuple[tuple[int, int], ...] = ()    # (tick, tension) of the last scenes rated
    scenes: int = 0                  # scenes the book holds
    words: int = 0                   # and their words
    status: Mapping[str, str] = field(default_factory=dict)   # beat id -> done|partly|not
    # Given the book's loops (story/outline/payoffs.py): those due, most urgent first; the ids of
    # those left open and of those kept open on purpose; the ending scenes written past
    # the last beat, and how many more the book may take to pay its loops off.
    due: tuple[Loop, ...] = ()
    loops_open: tuple[str, ...] = ()
    loops_kept: tuple[str, ...] = ()
    finale: int = 0
    finale_left: int = 0

    @property
    def finished(self) -> bool:
        """Whether the book is finished: its last beat has landed, and no ending scene is
        owed to the loops left open."""
        return self.position.finished and not self.finale_left

    @property
    def in_finale(self) -> bool:
        """Whether the next scene is an ending scene: past the last beat, paying off loops."""
        return self.position.finished and self.finale_left > 0

    def choices(self, ahead: bool = True) -> tuple[str, ...]:
        """The beats the next scene may advance: the current one, then (`ahead`) the next;
        none when the chapter has no beat left to land. An embedded 1.5B offered the next
        beat took it, scene after scene, and landed the beats out of order: a lean
        session offers only the current one."""
        at = self.position
        if at.beat is None:
            return ()
        return (at.beat.id, at.next_beat.id) if at.next_beat is not None and ahead \
            else (at.beat.id,)

    def beat_status(self, beat_id: str) -> str:
        """"done", "partly" or "not": the best status a scene gave beat `beat_id`."""
        return self.status.get(beat_id, "not")

    def ending(self, beat_id: str) -> str:
        """The arc's ending when `beat_id` is the outline's last beat (the scene that lands
        it ends the book), else ""."""
        beats = self.outline.beats()
        last = beats[-1].id if beats else ""
        return (self.outline.arc.ending or "the book ends") if beat_id and beat_id == last \
            else ""

    def beat(self, beat_id: str) -> Beat | None:
        """The outline's beat `beat_id`, or None."""
        return beat_of(self.outline, beat_id)

    def counts(self) -> str:
        """"3 chapters, 7 scenes, 2,345 words"."""
        chapters = len(self.outline.chapters())
        return (f"{chapters} chapter{'s' if chapters != 1 else ''}, {self.scenes} "
                f"scene{'s' if self.scenes != 1 else ''}, {self.words:,} words")

    def finished_line(self) -> str:
        """"the book is finished: 3 chapters, 7 scenes, 2,345 words", and the loops it
        left: "; 2 loops left open; 1 kept open on purpose: the_bell"."""
        return f"the book is finished: {self.counts()}{self.loops_line()}"

    def loops_line(self) -> str:
        """"; 2 loops left open; 1 kept open on purpose: the_bell" ("" when none is open)."""
        left, kept = len(self.loops_open), self.loops_kept
        line = f"; {left} loop{'s' if left != 1 else ''} left open" if left else ""
        if kept:
            line += f"; {len(kept)} kept open on purpose: {', '.join(kept)}"
        return line


def beat_of(outline: Outline, beat_id: str) -> Beat | None:
    """The beat of `outline` whose id is `beat_id`, or None."""
    return next((b for b in outline.beats() if b.id == beat_id), None) if beat_id else None


def book_standing(outline: Outline, scenes: Sequence[Scene], curve: str,
                  loops: Sequence[Loop] | None = None) -> BookStanding:
    """Where the scene after `scenes` (the book's, in order) goes, against `outline`
    with the tension curve `curve`; with the book's `loops`, the loops due and the
    ending scenes owed to them (see the module). Pure."""
    filled = fill_tensions(outline, curve)
    written, status = tally(scenes)
    at = position(filled, written, status)
    if at.beat is not None and at.beat.tension is not None:
        target = at.beat.tension
    else:
        target = round(target_tension(curve, at.progress))
    rated = tuple((s.tick, s.tension) for s in scenes if s.tension is not None)
    out = BookStanding(filled, at, target, rated[-REALIZED_SHOWN:], len(scenes),
                       sum(s.words for s in scenes), status)
    if loops is None:
        return out
    waiting, kept = left_open(loops)
    finale = _past_last_beat(filled, scenes) if at.finished else 0
    room = math.floor(STRETCH * filled.planned_scenes()) - len(scenes)
    left = max(0, min(FINALE_SCENES - finale, room)) if at.finished and waiting else 0
    return replace(out, due=tuple(due(loops, filled, at)), loops_open=tuple(waiting),
                   loops_kept=tuple(kept), finale=finale, finale_left=left)


def _past_last_beat(outline: Outline, scenes: Sequence[Scene]) -> int:
    """How many of the last `scenes` (whose book is past its last beat) came after the
    scene that landed it (counted up to FINALE_SCENES)."""
    past = 0
    while past < min(FINALE_SCENES, len(scenes)) and \
            position(outline, *tally(scenes[:len(scenes) - past - 1])).finished:
        past += 1
    return past


def tension_course(outline: Outline, scenes: Sequence[Scene],
                   curve: str) -> dict[int, tuple[int | None, int | None]]:
    """tick -> (the target tension its planner was shown, the tension its extractor rated),
    for each of the book's `scenes` (in order) written under the outline (with a chapter):
    each scene's target as `book_standing` gave it from the scenes before it. Pure."""
    course: dict[int, tuple[int | None, int | None]] = {}
    for n, scene in enumerate(scenes):
        if scene.chapter is not None:
            course[scene.tick] = (book_standing(outline, scenes[:n], curve).target, scene.tension)
    return course


def read_standing(project: Any, curve: str, reader: SceneReader | None = None,
                  upto: int | None = None, *, strict: bool = False,
                  loops: Sequence[Loop] | None = None) -> BookStanding | None:
    """Where the project's next scene goes (after scene `upto`, else its last), from its
    outline and its scenes (read by `reader`, which keeps them parsed; one that cannot be
    read is left out, the tick stops on it naming it, or with `strict` its error is
    raised) and its `loops` (else memory's as the files hold them; none when they cannot
    be read); None when the book has no outline. A bad outline is an OutlineError naming
    its file and line."""
    outline = load_outline(project.outline_file)
    if outline is None:
        return None
    reader = reader or SceneReader(project.scenes_dir)
    ticks = [t for t in scene_ticks(project.scenes_dir) if upto is None or t <= upto]
    read = reader if strict else _readable(reader)
    return book_standing(outline, [s for s in map(read, ticks) if s is not None], curve,
                         _loops(project) if loops is None else loops)


def _loops(project: Any) -> list[Loop]:
    """Memory's loops as the project's files hold them ([] when they cannot be read: the
    tick stops on them, naming the file)."""
    try:
        return load_memory(project.memory_dir).loops
    except (NovelError, OSError):
        return []


def _readable(reader: SceneReader) -> Callable[[int], Scene | None]:
    def read(tick: int) -> Scene | None:
        try:
            return reader(tick)
        except (NovelError, OSError):
            return None
    return read


def refuse_finished(at: BookStanding | None) -> None:
    """Raise BookFinishedError when the book is finished (its outline's last beat has
    landed): no tick goes on until the author extends the outline."""
    if at is not None and at.finished:
        raise BookFinishedError(f"{at.finished_line()}; {GO_ON}", chapters=len(
            at.outline.chapters()), scenes=at.scenes, words=at.words, line=at.finished_line())


def check_unfinished(project: Any, curve: str) -> None:
    """refuse_finished for the project as its files stand (a scene that cannot be read
    refuses nothing here: the tick stops on it, naming it and `novel doctor --fix`)."""
    try:
        at = read_standing(project, curve, strict=True)
    except (NovelError, OSError):
        return
    refuse_finished(at)


def scene_shape(at: BookStanding | None, beat: str, status: str, tension: int | None,
                reason: str) -> dict[str, Any]:
    """What a scene of a book with an outline records of it (the Scene fields): its
    chapter, the beat its plan advanced and the extractor's status of it, its tension
    and why; nothing for a book without one."""
    if at is None:
        return {}
    chapter = at.position.chapter or (at.outline.chapters()[-1] if at.in_finale else None)
    return {"chapter": chapter.number if chapter is not None else None, "beat": beat,
            "beat_status": status if beat else "", "tension": tension,
            "tension_reason": reason if tension is not None else ""}
