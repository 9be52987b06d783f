"""The book's names in a tick: its pool read (or made, once), offered, and kept to.

`read_pool_for` reads `names.yaml` when the planner's prompt is built (a broken
file is a warning naming its file and line, and made-up names stand in for it
this tick: the author's file is never written over), and refills a list of it
whose names are all taken (made-up names, landing with the tick; the file's
comments kept); `offer_for` is what the planner's prompt offers; `guard_plan`
renames the plan's confusable newcomers (tick/stages/newcomers.py), making the
pool the first time a name must go (the names stage: tick/stages/names.py), which
then lands with the tick's commit; `guard_extraction` keeps the extractor from
making one a character of memory.
"""

from __future__ import annotations

from typing import Any

from novel_agent.errors import FileFormatError
from novel_agent.story.decisions import Extraction
from novel_agent.story.name_pool import (
    LISTS,
    POOL_FILE,
    NamePool,
    fallback_pool,
    offer,
    pool_text,
    read_pool,
    refilled,
)
from novel_agent.tick.stages import names as names_stage
from novel_agent.tick.stages import newcomers
from novel_agent.tick.stages.extract import new_name
from novel_agent.yaml_comments import text_of


def seed_of(session: Any, d: Any) -> str:
    """The seed of the book's made-up names: the model's seed and the book's name."""
    return f"{session.config.llm.seed}|{d.story.name}"


def read_pool_for(session: Any, d: Any) -> None:
    """Read the book's pool into the draft (`d.pool`; None when it has none yet). A list
    of it whose names are all taken is refilled (story/name_pool.refilled: made-up names
    replace them), to land with the tick."""
    if d.pool is not None:
        return
    path = session.project.root / POOL_FILE
    try:
        d.pool = read_pool(path)
    except FileFormatError as exc:
        d.warnings.append(f"{exc}; made-up names stand in for it until it is fixed")
        d.pool = fallback_pool(seed_of(session, d), newcomers.memory_book(d.memory))
        return
    more = d.pool and refilled(d.pool, newcomers.memory_book(d.memory), seed_of(session, d))
    if more:
        lists = [key for key in LISTS if getattr(more, key) != getattr(d.pool, key)]
        d.notices.append(f"names: every {_said(k[:-1] for k in lists)} of {POOL_FILE} was "
                         f"taken; made up in their place: "
                         f"{_said(f'{len(getattr(more, k))} {k}' for k in lists)}")
        d.pool, d.pool_text = more, pool_text(more, text_of(path))   # its comments kept


def _said(items: Any) -> str:
    """"a", "a and b", "a, b and c", of list keys ("first_names": "first names")."""
    said = [str(item).replace("_", " ") for item in items]
    return " and ".join(filter(None, (", ".join(said[:-1]), said[-1])))


def offer_for(d: Any) -> str:
    """What the planner's prompt offers of the pool ("" before the book has one)."""
    if d.pool is None:
        return ""
    names = offer(d.pool, newcomers.memory_book(d.memory))
    return f"A new character or place takes one of these names:\n{names}" if names else ""


def guard_plan(session: Any, d: Any, check: Any) -> None:
    """Rename the plan's newcomers a reader would take for someone or somewhere known."""
    def pool() -> NamePool:
        if d.pool is None:
            d.pool = _made(session, d)
        return d.pool

    d.plan, lines = newcomers.fresh_names(d.plan, d.memory, pool, check=check,
                                          seed=seed_of(session, d))
    d.warnings += lines


def _made(session: Any, d: Any) -> NamePool:
    """The pool, made now by the planner's model (or the syllable generator), to land
    with the tick."""
    budget = session.budget("planner")
    count = session.counter_of("planner").count_messages
    pool, line = names_stage.make_pool(
        session.model, d.story, max_tokens=budget.max_output,
        fits=lambda messages: count(messages) <= budget.tokens,
        room=lambda messages: budget.left_after(count(messages)),
        seed=seed_of(session, d), known=newcomers.memory_book(d.memory),
        made_by=f"the planner's model ({session.stage('planner').limits.model or 'default'})")
    d.notices.append(line)
    d.pool_text = pool_text(pool)
    return pool


def guard_extraction(d: Any, extraction: Extraction, prose: str) -> Extraction:
    """`extraction` without the new characters a reader would take for known ones (not
    of a given scene: an imported book names its people as its author did)."""
    if d.given is not None:
        return extraction
    extraction, lines = newcomers.unconfusable(extraction, d.memory,
                                               lambda name: new_name(name, prose))
    d.warnings += lines
    return extraction
