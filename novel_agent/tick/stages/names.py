"""The names stage: the book's pool of names, made once by the planner's model.

The first tick that needs a name for a newcomer (tick/stages/newcomers.py) and
finds no `names.yaml` asks the planner's model, once, for first names, surnames
and places suited to the story bible (one call as stage "names", held to the
planner's budget, a row of its own in the usage ledger). An answer that cannot
be used after one repair, a failed call or a prompt over the budget gives the
syllable generator's pool instead (story/name_pool.fallback_pool); the offline
model answers with that same generator, from its seed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from novel_agent.context.sections import story_bible
from novel_agent.errors import ModelError
from novel_agent.models.ask import Room, ask_json
from novel_agent.models.base import ChatModel
from novel_agent.story.name_pool import (
    SIZES,
    NamePool,
    fallback_pool,
    pool_from_json,
    pool_schema,
)
from novel_agent.text.nomenclature import NameBook

STAGE = "names"
SYSTEM = (
    "You name the people and places of a novel. Answer with one JSON object only, with "
    "these keys: \"first_names\" ({first_names} first names), \"surnames\" ({surnames} "
    "surnames) and \"places\" ({places} place names: towns, streets, houses, landmarks). "
    "Every name fits the book's setting, its time and its culture, as the story bible "
    "below tells them. A first name or a surname is one word. Make them easy to tell "
    "apart: no two a letter or two apart, few starting with the same letter, none of the "
    "names the story bible already uses.")


def messages_for(story: object) -> list[dict[str, str]]:
    """The names stage's request: what to answer, then the story bible."""
    return [{"role": "system", "content": SYSTEM.format(**SIZES)},
            {"role": "user", "content": f"{story_bible(story)}\n\nName them now: the JSON "
                                        "object only."}]


def make_pool(model: ChatModel, story: object, *, max_tokens: int,
              fits: Callable[[list[dict[str, str]]], bool], room: Room | None,
              seed: str | int, known: NameBook, made_by: str) -> tuple[NamePool, str]:
    """The book's pool and a line saying how it was made: the model's answer (`made_by`
    names it), else the syllable generator's (`seed`; none confusable with `known`'s
    names) with the reason."""
    messages = messages_for(story)
    if not fits(messages):
        why = "its prompt is over the planner's budget"
    else:
        try:
            pool, _ = ask_json(model, STAGE, messages, max_tokens, pool_schema(),
                               pool_from_json, room)
            return replace(pool, made_by=made_by), f"names: {_counts(pool)} made by {made_by}"
        except ModelError as exc:           # a failed call, or an answer not usable twice
            why = str(exc)
    pool = fallback_pool(seed, known)
    return pool, (f"names: {_counts(pool)} made by the syllable generator (the planner's "
                  f"model could not make them: {why[:160]})")


def _counts(pool: NamePool) -> str:
    return (f"a pool of {len(pool.first_names)} first names, {len(pool.surnames)} surnames "
            f"and {len(pool.places)} places")
