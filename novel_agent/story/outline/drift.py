"""Whether the story has drifted from its outline at a checkpoint, measured from the
scenes and memory alone.

A checkpoint is the tick that closes a chapter: the scene after it goes to a later
chapter (story/outline/position.py), every `every`th chapter the book closes, never
at the book's end. What the story did since the last checkpoint (the scenes of the
chapters closed since) against what the outline meant:

- missed: a beat of a chapter the book has left since, not done;
- out of order: a beat done while an earlier beat of its scene's chapter (or a beat
  between) was not done yet;
- threads: a loop opened since, still open, that no beat of the rest names
  (story/faithfulness.names: most of its significant words).

The story has drifted when a beat was missed or landed out of order, or when
THREADS or more new threads are open; then tick/stages/revise_outline.py revises the
rest of the outline. Pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from novel_agent.story.faithfulness import Mention, names
from novel_agent.story.memory.records import Loop, is_open
from novel_agent.story.outline.file import Beat, Outline
from novel_agent.story.outline.position import position, tally
from novel_agent.story.scenes import Scene

THREADS = 3       # new threads no beat covers that are drift by themselves


@dataclass(frozen=True)
class Drift:
    """What the story did since the last checkpoint against the outline."""

    chapter: int                        # the chapter the book goes on to (the rest from it)
    closed: tuple[int, ...]             # the chapters closed since the last checkpoint
    landed: tuple[Beat, ...] = ()       # beats the window's scenes did
    missed: tuple[Beat, ...] = ()       # beats of the chapters left, not done
    out_of_order: tuple[Beat, ...] = ()  # beats done before an earlier one
    threads: tuple[str, ...] = ()       # new open loops no beat of the rest names

    @property
    def drifted(self) -> bool:
        """Whether the rest of the outline should be revised."""
        return bool(self.missed or self.out_of_order or len(self.threads) >= THREADS)

    def line(self) -> str:
        """"2 beats missed, 1 out of order, 3 new threads" (what drifted; "on course")."""
        parts = [_count(len(self.missed), "beat") + " missed" if self.missed else "",
                 f"{len(self.out_of_order)} out of order" if self.out_of_order else "",
                 _count(len(self.threads), "new thread") if self.threads else ""]
        return ", ".join(p for p in parts if p) or "on course"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def checkpoint(outline: Outline, scenes: Sequence[Scene], every: int = 1) -> int | None:
    """The chapter the book goes on to when the last of `scenes` (the book's, in order)
    closed a chapter at a checkpoint (the `every`th chapter closed since the last one);
    None otherwise, and when the book is finished."""
    last = scenes[-1].chapter if scenes else None
    if last is None:
        return None
    at = position(outline, *tally(scenes))
    if at.chapter is None or at.chapter.number == last:
        return None
    return at.chapter.number if len(written_chapters(scenes)) % max(1, every) == 0 else None


def written_chapters(scenes: Iterable[Scene]) -> list[int]:
    """The chapters the scenes were written in, each once, in order."""
    return list(dict.fromkeys(s.chapter for s in scenes if s.chapter is not None))


def measure(outline: Outline, scenes: Sequence[Scene], loops: Iterable[Loop],
            chapter: int, every: int = 1) -> Drift:
    """The drift of the `every` chapters the book closed before going on to `chapter`,
    from the book's `scenes` (in order) and memory's `loops`."""
    closed = tuple(written_chapters(scenes)[-max(1, every):])
    window = [s for s in scenes if s.chapter in closed]
    since = window[0].tick if window else (scenes[-1].tick + 1 if scenes else 1)
    _, status = tally(scenes)
    done = {beat_id for beat_id, said in status.items() if said == "done"}
    first = min(closed, default=chapter)
    left = [b for c in outline.chapters() if first <= c.number < chapter for b in c.beats]
    rest = [b for c in outline.chapters() if c.number >= chapter for b in c.beats
            if b.id not in done]
    ids = {b.id: b for b in outline.beats()}
    landed = {s.beat for s in window if s.beat and s.beat_status == "done"}
    return Drift(chapter, closed, tuple(b for b in outline.beats() if b.id in landed),
                 tuple(b for b in left if b.id not in done),
                 tuple(ids[i] for i in ahead(outline, scenes, since) if i in ids),
                 tuple(threads(loops, since, rest)))


def ahead(outline: Outline, scenes: Sequence[Scene], since: int) -> list[str]:
    """The beats the scenes from tick `since` on did while an earlier beat of their
    chapter (or one between it and the beat) was not done yet, in the order done."""
    order = [b.id for b in outline.beats()]
    place = {beat_id: i for i, beat_id in enumerate(order)}
    starts = {c.number: place[c.beats[0].id] for c in outline.chapters() if c.beats}
    done: set[str] = set()
    early: list[str] = []
    for scene in scenes:
        if scene.beat_status != "done" or scene.beat not in place or scene.beat in done:
            continue
        start = starts.get(scene.chapter or 0, place[scene.beat])
        if scene.tick >= since and any(b not in done for b in order[start:place[scene.beat]]):
            early.append(scene.beat)
        done.add(scene.beat)
    return early


def threads(loops: Iterable[Loop], since: int, rest: Sequence[Beat]) -> list[str]:
    """The open loops opened from tick `since` on that no beat of `rest` names."""
    found = []
    for loop in loops:
        opened, text = loop.get("opened_in"), str(loop.get("description") or "").strip()
        if not is_open(loop) or not isinstance(opened, int) \
                or opened < since or not text:
            continue
        if not any(names(beat.what, Mention("loop", text)) for beat in rest):
            found.append(text)
    return found
