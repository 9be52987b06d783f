"""The outline's prompts: what the model sees when it makes (or rewrites) a level of it.

Fixed sections: the story bible (pinned), the arc and its ending and the acts once
they are made, for a rewrite the story so far (its overall summary), and for a
revision at a checkpoint what happened since the last one. The
chapters already decided are a pool of items (each with its beats, then as a line,
then as its title), the ones nearest the part being written first, so a long
outline still fits the budget: what does not fit goes leaner, then drops. What to
write now (the level, how many, for which act or chapter) is in the template's
values (templates/outline.j2). Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from novel_agent.context.briefing import Briefing
from novel_agent.context.items import Item, Pool
from novel_agent.context.sections import Section, story_bible
from novel_agent.story.outline.file import Chapter, Outline

OUTLINE_LAYOUT = ("bible", "arc", "acts", "story", "drift", "chapters")
CHAPTERS_SHARE = 0.6     # of the budget, for the chapters already decided


def chapter_forms(chapter: Chapter) -> tuple[str, ...]:
    """A chapter in the prompt: with its beats, as one line, as its title."""
    head = f"Chapter {chapter.number} — {chapter.title}"
    line = f"{head}: {chapter.purpose}" if chapter.purpose else head
    beats = "\n".join(f"- {b.what}" + (f" (tension {b.tension})" if b.tension is not None else "")
                      for b in chapter.beats)
    return tuple(dict.fromkeys(f for f in ((f"{line}\n{beats}" if beats else line), line, head)))


def acts_text(outline: Outline) -> str:
    """One line per act: its number, name, chapters and summary."""
    lines = []
    for number, act in enumerate(outline.acts, 1):
        span = ""
        if act.chapters:
            first, last = act.chapters[0].number, act.chapters[-1].number
            span = f" (chapter {first})" if first == last else f" (chapters {first}–{last})"
        lines.append(f"Act {number} — {act.name}{span}: {act.summary}".rstrip(": "))
    return "\n".join(lines)


def outline_briefing(story: Any, outline: Outline | None, values: Mapping[str, Any], *,
                     near: int = 0, so_far: str = "", drift: str = "") -> Briefing:
    """The briefing of one outline call: `outline` what is decided so far (None before the
    arc), `values` what to write now (the template's), `near` the chapter it is about (the
    chapters nearest it go in first), `so_far` the story written so far, if any, `drift`
    what happened since the last checkpoint (a revision's)."""
    fixed = [Section("bible", "Story bible", story_bible(story), pinned=True)]
    if outline is not None:
        fixed.append(Section("arc", "The book's arc",
                             f"{outline.arc.summary}\nEnding: {outline.arc.ending}"))
        if outline.acts:
            fixed.append(Section("acts", "Acts", acts_text(outline)))
    if so_far.strip():
        fixed.append(Section("story", "The story so far", so_far.strip()))
    if drift.strip():
        fixed.append(Section("drift", "What happened since the last checkpoint", drift.strip()))
    chapters = outline.chapters() if outline is not None else []
    items = tuple(Item(f"chapter:{c.number}", chapter_forms(c), 1.0 / (1 + abs(c.number - near)),
                       (c.number,), why="decided") for c in chapters)
    pools = (Pool("chapters", "Chapters decided", items, CHAPTERS_SHARE, joiner="\n\n"),)
    return Briefing("outline", tuple(fixed), pools, OUTLINE_LAYOUT, dict(values),
                    truncatable=("story", "drift", "acts"))
