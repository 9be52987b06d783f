"""What the planner and the extractor are told of a book's outline. Pure.

The planner's "Where the book stands" (`standing_section`): the act, the chapter
(its title and purpose), the current and the next beat with their target tension,
the room left in the chapter, the beats overdue (not done with the chapter's room
used up), and the scene's target tension against the tension the last scenes
realized; the loops due (story/outline/payoffs.py: each with its id, to name in a
resolve_loop call, most urgent first, at most DUE_SHOWN) and where a loop opened now
pays off, or, in the final act, that none opens; past the last beat, the ending
scenes owed to the loops still open, which must be paid off now. It is pinned
(never dropped) and laid out at the prompt's volatile end, before the author's
note; it takes the richest of its forms (everything, then the texts shortened,
then one line) that fits its share of the planner's budget.

The extractor's "The planned beat" (`beat_section`): the beat the plan named,
whose status it is asked for.
"""

from __future__ import annotations

from collections.abc import Callable

from novel_agent.context.sections import Section
from novel_agent.story.memory.records import Loop
from novel_agent.story.outline.file import Beat
from novel_agent.story.outline.payoffs import final_act
from novel_agent.story.outline.standing import BookStanding

OUTLINE_SHARE = 0.05     # of the planner's budget, for where the book stands
LEAN_WORDS = 16          # of a beat's or a purpose's text, in the lean form
BARE_WORDS = 8           # of the current beat's text, in the barest form
NEAR = 1                 # the last scene's tension within this of the target is on target
DUE_SHOWN = 5            # loops due shown by name; the rest counted


def _cut(text: str, words: int | None) -> str:
    said = text.split()
    if words is None or len(said) <= words:
        return " ".join(said)
    return " ".join(said[:words]) + " …"


def _beat(beat: Beat, words: int | None) -> str:
    tension = f" (tension {beat.tension})" if beat.tension is not None else ""
    return f"{beat.id}{tension}: {_cut(beat.what, words)}"


def pacing_line(at: BookStanding) -> str:
    """"Tension: this scene's target is 6 of 10; the last scenes were 5 (scene 5), 4
    (scene 6): under it: raise the stakes" (the last scene's against the target)."""
    line = f"Tension: this scene's target is {at.target} of 10"
    if not at.realized:
        return line + "."
    last = ", ".join(f"{tension} (scene {tick})" for tick, tension in at.realized)
    newest = at.realized[-1][1]
    advice = ("under it: raise the stakes" if newest < at.target - NEAR else
              "over it: let this scene breathe" if newest > at.target + NEAR else "on target")
    return f"{line}; the last scenes were {last}: {advice}."


def _loop(loop: Loop, words: int | None) -> str:
    deferred = ", deferred" if loop.get("status") == "deferred" else ""
    payoff = f" (payoff {loop['payoff']}{deferred})" if loop.get("payoff") is not None else ""
    return f"- [{loop.get('id')}] {_cut(str(loop.get('description', '')), words)}{payoff}"


def due_lines(at: BookStanding, words: int | None, now: bool = False) -> list[str]:
    """The loops due, most urgent first (DUE_SHOWN of them, the rest counted): `now`,
    as the ending scenes' loops that must be paid off now."""
    if not at.due:
        return []
    head = ("Loops that must be paid off now" if now else
            "Loops due, most urgent first") + " (resolve each: resolve_loop naming its id):"
    more = len(at.due) - DUE_SHOWN
    return [head, *(_loop(loop, words) for loop in at.due[:DUE_SHOWN]),
            *([f"- and {more} more due"] if more > 0 else [])]


def payoff_line(at: BookStanding) -> str:
    """Where a loop opened now pays off, or that the final act opens none."""
    if final_act(at.outline, at.position):
        return "Final act: open no new loop; pay off the loops left."
    return ('A loop you open may name where it pays off as its open_loop target: a chapter '
            '("7") or a beat ("7.2") ahead.')


def _bare_due(at: BookStanding) -> str:
    shown = ", ".join(str(loop.get("id")) for loop in at.due[:DUE_SHOWN])
    more = len(at.due) - DUE_SHOWN
    return f"; loops due: {shown}" + (f" (+{more})" if more > 0 else "") if at.due else ""


def finale_forms(at: BookStanding) -> tuple[str, ...]:
    """Past the last beat, with loops left open: the ending scenes' forms."""
    left = len(at.loops_open)
    head = (f"The outline's last beat has landed, but {left} loop{'s are' if left != 1 else ' is'}"
            f" still open: this is an ending scene ({at.finale + 1} of at most "
            f"{at.finale + at.finale_left}) in the last chapter: pay them off now.")

    def form(words: int | None) -> str:
        return "\n".join([head, *due_lines(at, words, now=True), pacing_line(at)])
    return tuple(dict.fromkeys((form(None), form(LEAN_WORDS),
                                head + _bare_due(at) + f" Target tension {at.target}.")))


def standing_forms(at: BookStanding) -> tuple[str, ...]:
    """Where the book stands, from the richest form to the barest (see the module)."""
    s, outline = at.position, at.outline
    chapter, act = s.chapter, s.act
    if at.in_finale:
        return finale_forms(at)
    if chapter is None:
        return ("The book is finished: its last beat has landed.",)
    acts, chapters = len(outline.acts), len(outline.chapters())
    act_no = next((n for n, a in enumerate(outline.acts, 1) if a == act), 0)

    def form(words: int | None, act_summary: bool) -> str:
        head = f'Act {act_no} of {acts}, "{act.name}"' if act is not None else ""
        if act is not None and act_summary and act.summary:
            head += f": {act.summary}"
        lines = [head] if head else []
        purpose = f": {_cut(chapter.purpose, words)}" if chapter.purpose else ""
        lines.append(f'Chapter {chapter.number} of {chapters}, "{chapter.title}"{purpose}')
        if s.room > 0:
            lines.append(f"This scene is the chapter's scene {s.written + 1} of {chapter.scenes}: "
                         f"room for {s.room} scene{'s' if s.room != 1 else ''}, this one "
                         "included.")
        else:
            lines.append(f"The chapter's room is used up ({s.written} scenes written of its "
                         f"{chapter.scenes}): land what is left of it now.")
        if s.beat is not None:
            begun = (" (begun in an earlier scene, not finished: finish it in this one)"
                     if at.beat_status(s.beat.id) == "partly" else "")
            lines.append(f"Current beat {_beat(s.beat, words)}{begun}")
        if s.next_beat is not None:
            lines.append(f"Next beat {_beat(s.next_beat, words)}")
        if s.overdue:
            lines.append("OVERDUE, not done with the chapter's room used up: "
                         + "; ".join(_beat(b, words) for b in s.overdue))
        if chapter.number == outline.chapters()[-1].number:
            told = {b.what.strip() for b in (s.beat, s.next_beat) if b is not None}
            lines.append("This is the book's last chapter: its last beat ends the book"
                         + (f", as the arc ends: {_cut(outline.arc.ending, words)}"
                            if outline.arc.ending and outline.arc.ending.strip() not in told
                            else "."))
        lines.append(pacing_line(at))
        lines += [*due_lines(at, words), payoff_line(at)]
        return "\n".join(lines)

    beat = f"; beat {_beat(s.beat, BARE_WORDS)}" if s.beat is not None else ""
    overdue = f" (OVERDUE: {', '.join(b.id for b in s.overdue)})" if s.overdue else ""
    bare = (f"Act {act_no} of {acts}; chapter {chapter.number} of {chapters}, "
            f'"{chapter.title}", room {max(0, s.room)}{beat}{overdue}; target tension '
            f"{at.target}" + (f" (last: {', '.join(str(t) for _, t in at.realized)})"
                              if at.realized else "") + _bare_due(at) + ".")
    return tuple(dict.fromkeys((form(None, True), form(LEAN_WORDS, False), bare)))


def standing_section(at: BookStanding, count: Callable[[str], int], budget: int) -> Section:
    """The planner's pinned section: the richest form within OUTLINE_SHARE of `budget`
    tokens (`count`), else the barest."""
    forms = standing_forms(at)
    room = OUTLINE_SHARE * budget
    text = next((f for f in forms if count(f) <= room), forms[-1])
    items = tuple(b.id for b in (at.position.beat, at.position.next_beat) if b is not None)
    return Section("outline", "Where the book stands", text, pinned=True, items=items)


def beat_section(beat: Beat) -> Section:
    """The extractor's pinned section: the beat the scene was planned to advance."""
    return Section("beat", "The planned beat",
                   f"Beat {beat.id} of the outline, which this scene was meant to advance: "
                   f"{beat.what}", pinned=True, items=(beat.id,))
