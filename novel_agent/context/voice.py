"""What the writer is told of the book's voice: the voice cards of the people in the scene.

Each character present (the plan's POV and cast) whose memory file has a voice card
(story/voices.py) is an item of the writer's `voices` section, its forms the card in
two short lines, then in one (what they say and never say). The section comes after the
lore, in the prompt's tail (who is present changes every scene), and shares the cast's
budget (context.cast_share) with the lore: the cards are taken first, the lore gets
what they leave. Pure.
"""

from __future__ import annotations

from novel_agent.context.items import Item
from novel_agent.story.decisions import Plan
from novel_agent.story.memory import Memory, find_person
from novel_agent.story.voices import card, card_line, card_lines

VOICES_TITLE = "How they speak"


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
