"""What the writer is told of the book's voice: its style, and the voice cards of the
people in the scene.

The style (style.yaml: story/style.py) is the writer's `style` section, right after the
story bible in the prompt's stable part (it changes only when the author edits the
file): its few lines (person and tense, sentence and paragraph length, dialogue, words
to favour), always, then the sample passage, whole or its first sentences, within
context.style_share.

Each character present (the plan's POV and cast) whose memory file has a voice card
(story/memory/voices.py) is an item of the writer's `voices` section, its forms the card in
two short lines, then in one (what they say and never say). The section comes after the
lore, in the prompt's tail (who is present changes every scene), and shares the cast's
budget (context.cast_share) with the lore: the cards are taken first, the lore gets
what they leave. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from novel_agent.context.items import Item
from novel_agent.story.decisions import Plan
from novel_agent.story.memory.store import Memory, find_person
from novel_agent.story.memory.voices import card, card_line, card_lines
from novel_agent.story.style import style_lines
from novel_agent.text.cleanup import cut_to_sentence

VOICES_TITLE = "How they speak"
STYLE_TITLE = "The book's style"
SAMPLE_HEAD = "A passage in this style (hear its voice; its events are not this book's):"
SAMPLE_SHORT = 50     # words of the sample when the whole does not fit


def style_items(style: Mapping[str, Any] | None) -> list[Item]:
    """The style's lines (kept: never dropped) and its sample passage (whole, then its
    first sentences), as the writer's style section's items; none without a style."""
    if not style:
        return []
    out = []
    lines = style_lines(style)
    if lines:
        out.append(Item("style:lines", ("\n".join(lines),), 2.0, (0,), keep=True,
                        why="the book's style"))
    sample = str(style.get("sample") or "").strip()
    if sample:
        short = cut_to_sentence(sample, SAMPLE_SHORT).text
        out.append(Item("style:sample", tuple(dict.fromkeys(
            (f"{SAMPLE_HEAD}\n{sample}", f"{SAMPLE_HEAD}\n{short}"))), 1.0, (1,),
            why="the style's sample"))
    return out


def voice_items(memory: Memory, plan: Plan) -> list[Item]:
    """The voice cards of the scene's people, the POV's first, each once (a name said
    twice, or as an alias, is one person)."""
    out: list[Item] = []
    seen: set[str] = set()
    names = [plan.pov, *plan.characters]
    for n, name in enumerate(names):
        who = find_person(memory, name) if name else None
        if who is None or str(who.get("id")) in seen:
            continue
        seen.add(str(who.get("id")))
        voice = card(who)
        if voice:
            called = str(who.get("name") or name)
            out.append(Item(f"voice:{who.get('id')}",
                            (card_lines(called, voice), card_line(called, voice)),
                            score=float(len(names) - n), rank=(n,),
                            why="the POV's voice" if n == 0 else "present in the scene"))
    return out
