"""Where the next scene falls in the outline: the act, the chapter it belongs to, its
current and next beat, the room left in the chapter, how far through the book it is.

Pure: given the outline, how many scenes each chapter holds so far (`written`:
chapter number -> scenes), and each beat's status (`status`: beat id -> "done",
"partly" or "not"; a beat not named is not done), `position` says where the next
scene goes. The rules:

- beats land in order: the current beat is the first of the chapter not done
  ("partly" is not done);
- the next scene stays in the chapter the last scene was written in while that
  chapter has a beat not done, for at most `stretch` times its target length
  (its `scenes`); then it goes on to the next chapter whose beats are not all done
  (a chapter whose beats the story has already done, ahead of time, is passed);
  a chapter without beats takes its target length;
- a beat of the chapter not done once its room is used up is `overdue` (flag it);
  one of a chapter the book has gone past is `missed`;
- once the chapter holds a scene, a beat is passed (`missed`) when the chapter has
  fewer scenes left, up to its stretch, than beats not done: each later beat keeps a
  scene, the book's last (its ending) included (a 1.5B spent each chapter's three
  scenes on its first beat);
- when no chapter is left the book is `finished` (when the last beat lands).

`tally` gives `written` and `status` from the scenes themselves (each says its
chapter, its beat and the extractor's status of it), so the scene files are the
record: a rewind, a redo or a revise needs nothing else.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from novel_agent.story.outline.file import Act, Beat, Chapter, Outline
from novel_agent.story.scenes import BEAT_STATUSES, Scene

STATUSES = BEAT_STATUSES
STRETCH = 1.5      # a chapter takes at most this times its target length before the book moves on


@dataclass(frozen=True)
class Position:
    """Where in the outline the next scene falls; `chapter` None: the book is finished."""

    act: Act | None
    chapter: Chapter | None       # the chapter the next scene belongs to
    beat: Beat | None             # its current beat: the first not done (None: none left)
    next_beat: Beat | None        # the beat after it, in this chapter or a later one
    written: int                  # scenes the chapter holds so far
    room: int                     # scenes left of its target length, the next one included
    progress: float               # how far through the planned scenes the next one falls, 0-1
    overdue: tuple[Beat, ...] = ()   # beats of the chapter not done with its room used up
    missed: tuple[Beat, ...] = ()    # beats not done of the chapters the book has left

    @property
    def finished(self) -> bool:
        """Whether the book is finished: no chapter left to write in."""
        return self.chapter is None


def tally(scenes: Iterable[Scene]) -> tuple[dict[int, int], dict[str, str]]:
    """`written` (chapter -> scenes it holds) and `status` (beat id -> the best status any
    scene gave it: done over partly over not) of the scenes, for `position`."""
    written: dict[int, int] = {}
    status: dict[str, str] = {}
    for scene in scenes:
        if scene.chapter is not None:
            written[scene.chapter] = written.get(scene.chapter, 0) + 1
        if scene.beat and scene.beat_status:
            status[scene.beat] = min(status.get(scene.beat, "not"), scene.beat_status,
                                     key=STATUSES.index)
    return written, status


def longest(chapter: Chapter, stretch: float = STRETCH) -> int:
    """The most scenes `chapter` takes before the book moves on (its target length at least)."""
    return max(chapter.scenes, math.floor(chapter.scenes * stretch))


def position(outline: Outline, written: Mapping[int, int], status: Mapping[str, str], *,
             stretch: float = STRETCH) -> Position:
    """Where the next scene goes (see the module's docstring for the rules)."""
    chapters = outline.chapters()
    done = {beat_id for beat_id, said in status.items() if said == "done"}
    last = max((n for n, count in written.items() if count > 0 and outline.chapter(n)),
               default=None)
    start = next((i for i, c in enumerate(chapters) if c.number == last), 0)
    missed = [b for c in chapters[:start] for b in c.beats if b.id not in done]
    for i, chapter in enumerate(chapters[start:], start):
        count = written.get(chapter.number, 0)
        undone = [b for b in chapter.beats if b.id not in done]
        over = count >= longest(chapter, stretch)
        if not (over or (not undone and (chapter.beats or count >= chapter.scenes))):
            over_room = len(undone) - (longest(chapter, stretch) - count)
            passed = max(0, min(len(undone) - 1, over_room)) if count else 0
            return _at(outline, chapters, i, count, undone[passed:], done,
                       (*missed, *undone[:passed]))
        missed += undone
    return Position(None, None, None, None, 0, 0, 1.0, (), tuple(missed))


def _at(outline: Outline, chapters: list[Chapter], i: int, count: int, undone: list[Beat],
        done: set[str], missed: tuple[Beat, ...]) -> Position:
    chapter = chapters[i]
    later = [b for c in chapters[i + 1:] for b in c.beats if b.id not in done]
    following = [*undone[1:], *later]
    planned = sum(c.scenes for c in chapters)
    before = sum(c.scenes for c in chapters[:i]) + min(count, chapter.scenes - 1)
    room = chapter.scenes - count
    return Position(outline.act_of(chapter.number), chapter, undone[0] if undone else None,
                    following[0] if following else None, count, room,
                    (before + 0.5) / max(1, planned),
                    tuple(undone) if room <= 0 else (), missed)
