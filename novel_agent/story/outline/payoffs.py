"""Payoffs: where each plot loop of a book with an outline is meant to be paid off. Pure.

A loop of a book with an outline carries `payoff`, a chapter ("7") or a beat
("7.2") of the outline, and a status (story/memory/records.py's LoopStatus):

- open: as it opened;
- progressing: a scene after the one that opened it touched it (the scenes
  story/memory/extraction.apply_extraction adds to it: story/memory/store.touched_loops);
- deferred: the book left its payoff's chapter with the loop unresolved, so the
  tick pushed its payoff on to the chapter the book is in now;
- resolved.

An author's `keep_open: true` in a loop's file leaves it open on purpose: it is
never due, and the ending does not wait for it.

The rules, applied by the tick after its extraction (`settle`), none of them a
model call:

- a loop gets its payoff at the first tick that finds it open without one (the
  tick it opens in, or the first under a new outline): the chapter or beat the
  planner named as its open_loop call's `target`, when that is one of the
  outline's at or after the scene's chapter; else `default_payoff`: a quarter of
  the book's chapters on (AHEAD_LEAST at least), never past the last chapter, and
  in the final act the last chapter;
- no loop opens in the final act (`final_act`: the tick drops the extractor's
  loops_opened and the planner's open_loop calls there);
- a loop is `due` when it is neither resolved nor kept open and its payoff is at
  or behind where the book stands (its chapter reached; its beat the current one
  or behind it); once the outline's last beat has landed every open loop is due.
  The planner is shown the loops due, most urgent first (the earliest payoff,
  then the oldest loop).

What `settle` set is kept in the tick's plan record (`payoffs`), so a replay
(revision/rederive.py) sets the same (`apply_settled`), whatever the outline
says by then.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, cast

from novel_agent.story.memory.records import Loop, is_open
from novel_agent.story.outline.file import Outline
from novel_agent.story.outline.position import Position

AHEAD_SHARE = 4       # a loop's default payoff: this share of the book's chapters on ...
AHEAD_LEAST = 2       # ... and at least this many chapters on
Spot = tuple[int, int]      # a spot of the outline: (chapter's index in the book, beat's index in it; -1: the chapter)


def final_act(outline: Outline, position: Position) -> bool:
    """Whether the next scene is in the final act, where no loop opens: the last act of an
    outline of two or more (of one act: its last chapter), or past the last beat."""
    return position.chapter is None or closing_chapter(outline, position.chapter.number)


def closing_chapter(outline: Outline, number: int) -> bool:
    """Whether chapter `number` is in the final act (of an outline of one act: whether it
    is the last chapter)."""
    chapters = outline.chapters()
    if len(outline.acts) > 1:
        return outline.act_of(number) == outline.acts[-1]
    return bool(chapters) and number == chapters[-1].number


def scene_chapter(outline: Outline, position: Position) -> int | None:
    """The number of the chapter the next scene belongs to: past the last beat, the last
    (its ending scenes); None for an outline without chapters."""
    if position.chapter is not None:
        return position.chapter.number
    chapters = outline.chapters()
    return chapters[-1].number if chapters else None


def default_payoff(outline: Outline, position: Position) -> str:
    """The payoff of a loop opening where the next scene goes: AHEAD chapters on, never
    past the last chapter; in the final act, the last chapter."""
    chapters = outline.chapters()
    if not chapters:
        return ""
    if final_act(outline, position):
        return str(chapters[-1].number)
    at = _index(outline, scene_chapter(outline, position))
    ahead = max(AHEAD_LEAST, math.ceil(len(chapters) / AHEAD_SHARE))
    return str(chapters[min(at + ahead, len(chapters) - 1)].number)


def spots(outline: Outline) -> dict[str, Spot]:
    """Each chapter's number and each beat's id, as a payoff names it, with its spot."""
    out: dict[str, Spot] = {}
    for n, chapter in enumerate(outline.chapters()):
        out.setdefault(str(chapter.number), (n, -1))
        for b, beat in enumerate(chapter.beats):
            out.setdefault(beat.id, (n, b))
    return out


def spot_of(outline: Outline, payoff: Any, table: Mapping[str, Spot] | None = None) -> Spot | None:
    """Where payoff `payoff` ("7", 7 or "7.2") is in the outline (`table`: its spots,
    when already made), or None when it names no chapter or beat of it."""
    return (spots(outline) if table is None else table).get(str(payoff).strip())


def _index(outline: Outline, number: int | None) -> int:
    return next((n for n, c in enumerate(outline.chapters()) if c.number == number), 0)


def here(outline: Outline, position: Position) -> Spot:
    """Where the next scene stands: its chapter and its current beat (past the chapter's
    last beat when none is left); past the last beat, after every chapter."""
    chapters = outline.chapters()
    if position.chapter is None:
        return len(chapters), 0
    beats = position.chapter.beats
    current = position.beat.id if position.beat is not None else None
    return (_index(outline, position.chapter.number),
            next((b for b, beat in enumerate(beats) if beat.id == current), len(beats)))


def planned(loop: Loop, outline: Outline,
            table: Mapping[str, Spot] | None = None) -> Spot:
    """Where a loop is meant to pay off: its payoff's spot, the last chapter when its
    payoff names none of the outline's (a chapter a revision took out) or it has none."""
    table = spots(outline) if table is None else table
    found = spot_of(outline, loop.get("payoff"), table) if loop.get("payoff") is not None else None
    return found if found is not None else (max(0, len(outline.chapters()) - 1), -1)


def waiting(loop: Loop) -> bool:
    """Whether a loop still waits for its payoff: open and not kept open on purpose."""
    return is_open(loop) and loop.get("keep_open") is not True


def due(loops: Iterable[Loop], outline: Outline, position: Position) -> list[Loop]:
    """The loops due where the book stands (see the module), most urgent first."""
    now, table = here(outline, position), spots(outline)
    found = [(planned(loop, outline, table), _opened(loop), n, loop)
             for n, loop in enumerate(loops) if waiting(loop)]
    return [loop for spot, *_, loop in sorted(found, key=lambda t: t[:3])
            if position.chapter is None or (loop.get("payoff") is not None and spot <= now)]


def _opened(loop: Loop) -> int:
    opened = loop.get("opened_in")
    return opened if isinstance(opened, int) and not isinstance(opened, bool) else 0


def named_payoffs(calls: Iterable[tuple[str, str]], find: Callable[[str], Loop | None],
                  outline: Outline,
                  position: Position) -> dict[str, str]:
    """loop id -> the payoff the planner named for it: of its open_loop calls' (question,
    target), the targets that are a chapter or beat of the outline at or after the
    scene's chapter (`find(question)`: the loop the question opened, or None)."""
    least, table = (_index(outline, scene_chapter(outline, position)), -1), spots(outline)
    out = {}
    for question, target in calls:
        spot = spot_of(outline, target, table) if target else None
        loop = find(question) if spot is not None and spot >= least else None
        if loop is not None:
            out[str(loop.get("id"))] = str(target).strip()
    return out


def settle(loops: Sequence[Loop], outline: Outline, position: Position, tick: int,
           named: Mapping[str, str] | None = None) -> dict[str, Loop]:
    """Each open loop's payoff and status after scene `tick` (the scene `position` placed),
    set in place: a payoff for one without (`named`'s, else default_payoff), deferred to
    the scene's chapter for one whose payoff's chapter the book has left, progressing for
    an open one a later scene touched. Returns what it set, by loop id (the record's
    `payoffs`)."""
    chapter = scene_chapter(outline, position)
    if chapter is None:
        return {}
    now, named, table = _index(outline, chapter), named or {}, spots(outline)
    out: dict[str, Loop] = {}
    for loop in loops:
        if not waiting(loop):
            continue
        key, fields = str(loop.get("id")), Loop()
        if loop.get("payoff") is None:
            fields["payoff"] = named.get(key) or default_payoff(outline, position)
        elif planned(loop, outline, table)[0] < now:
            fields |= {"payoff": str(chapter), "status": "deferred"}
        if (loop.get("status") or "open") == "open" and "status" not in fields and \
                _opened(loop) < tick and tick in (loop.get("scenes") or []):
            fields["status"] = "progressing"
        if fields:
            loop.update(fields)
            out[key] = fields
    return out


def apply_settled(loops: Sequence[Loop], settled: Any) -> list[str]:
    """What `settle` set at a tick (its record's `payoffs`), set again on `loops` (in
    place); its lines (settled_lines)."""
    if not isinstance(settled, Mapping) or not settled:
        return []
    by_id = {str(loop.get("id")): loop for loop in loops if is_open(loop)}
    done: dict[str, Loop] = {}
    for key, fields in settled.items():
        loop = by_id.get(str(key))
        if loop is not None and isinstance(fields, Mapping):
            done[str(key)] = cast(Loop, {k: v for k, v in fields.items()
                                         if k in ("payoff", "status")})
            loop.update(done[str(key)])
    return settled_lines(done)


def left_open(loops: Iterable[Loop]) -> tuple[list[str], list[str]]:
    """The ids of the loops not resolved: those waiting for a payoff, and those kept open
    on purpose (keep_open)."""
    waiting_ids: list[str] = []
    kept: list[str] = []
    for loop in loops:
        if is_open(loop):
            (kept if loop.get("keep_open") is True else waiting_ids).append(str(loop.get("id")))
    return waiting_ids, kept


def settled_lines(settled: Mapping[str, Loop]) -> list[str]:
    """What `settle` set, one line a loop ("loop payoff: the_bell in 7", "loop deferred:
    the_bell to 9", "loop progressing: the_bell"), as memory changes."""
    lines = []
    for key, fields in settled.items():
        status, payoff = fields.get("status"), fields.get("payoff")
        if status == "deferred":
            lines.append(f"loop deferred: {key} to {payoff}")
            continue
        if payoff is not None:
            lines.append(f"loop payoff: {key} in {payoff}")
        if status == "progressing":
            lines.append(f"loop progressing: {key}")
    return lines
