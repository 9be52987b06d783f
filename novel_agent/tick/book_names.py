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

from collections.abc import Iterable
from dataclasses import replace

from novel_agent.errors import FileFormatError
from novel_agent.story.decisions import Extraction
from novel_agent.story.memory.extraction import new_name
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
from novel_agent.tick.draft import TickContext, TickDraft
from novel_agent.tick.stages import names as names_stage
from novel_agent.tick.stages import newcomers
from novel_agent.tick.stages.newcomers import NameCheck
from novel_agent.yaml_comments import text_of


def seed_of(ctx: TickContext, d: TickDraft) -> str:
    """The seed of the book's made-up names: the model's seed and the book's name."""
    return f"{ctx.config.llm.seed}|{d.story.name}"


def read_pool_for(ctx: TickContext, d: TickDraft) -> TickDraft:
    """The draft with the book's pool read (`pool`; None when it has none yet). A list
    of it whose names are all taken is refilled (story/name_pool.refilled: made-up names
    replace them), to land with the tick."""
    if d.pool is not None:
        return d
    path = ctx.project.root / POOL_FILE
    try:
        pool = read_pool(path)
    except FileFormatError as exc:
        return replace(d, pool=fallback_pool(seed_of(ctx, d), newcomers.memory_book(d.memory))
                       ).warned(f"{exc}; made-up names stand in for it until it is fixed")
    more = pool and refilled(pool, newcomers.memory_book(d.memory), seed_of(ctx, d))
    if not more:
        return replace(d, pool=pool)
    lists = [key for key in LISTS if getattr(more, key) != getattr(pool, key)]
    return replace(d, pool=more, pool_text=pool_text(more, text_of(path))).told(   # its comments kept
        f"names: every {_said(k[:-1] for k in lists)} of {POOL_FILE} was taken; made up in "
        f"their place: {_said(f'{len(getattr(more, k))} {k}' for k in lists)}")


def _said(items: Iterable[str]) -> str:
    """"a", "a and b", "a, b and c", of list keys ("first_names": "first names")."""
    said = [str(item).replace("_", " ") for item in items]
    return " and ".join(filter(None, (", ".join(said[:-1]), said[-1])))


def offer_for(d: TickDraft) -> str:
    """What the planner's prompt offers of the pool ("" before the book has one)."""
    if d.pool is None:
        return ""
    names = offer(d.pool, newcomers.memory_book(d.memory))
    return f"A new character or place takes one of these names:\n{names}" if names else ""


def guard_plan(ctx: TickContext, d: TickDraft, check: NameCheck) -> TickDraft:
    """The draft with the plan's newcomers a reader would take for someone or somewhere
    known renamed (the pool made now, by the names stage, if it is needed and the book
    has none yet: it lands with the tick)."""
    made: list[TickDraft] = []

    def pool() -> NamePool:
        if d.pool is not None:
            return d.pool
        if not made:
            made.append(_made(ctx, d))
        assert made[0].pool is not None
        return made[0].pool

    plan, lines = newcomers.fresh_names(d.planned, d.memory, pool, check=check,
                                        seed=seed_of(ctx, d))
    return replace(made[0] if made else d, plan=plan).warned(*lines)


def _made(ctx: TickContext, d: TickDraft) -> TickDraft:
    """The draft with the pool made now by the planner's model (or the syllable
    generator), to land with the tick."""
    budget = ctx.budget("planner")
    count = ctx.session.counter_of("planner").count_messages
    pool, line = names_stage.make_pool(
        ctx.model(d), d.story, max_tokens=budget.max_output,
        fits=lambda messages: count(messages) <= budget.tokens,
        room=lambda messages: budget.left_after(count(messages)),
        seed=seed_of(ctx, d), known=newcomers.memory_book(d.memory),
        made_by=f"the planner's model ({ctx.session.stage('planner').limits.model or 'default'})")
    return replace(d, pool=pool, pool_text=pool_text(pool)).told(line)


def guard_extraction(d: TickDraft, extraction: Extraction, prose: str) -> tuple[Extraction, list[str]]:
    """`extraction` without the new characters a reader would take for known ones (not
    of a given scene: an imported book names its people as its author did), and the
    lines saying who was left out."""
    if d.given is not None:
        return extraction, []
    return newcomers.unconfusable(extraction, d.memory, lambda name: new_name(name, prose))
