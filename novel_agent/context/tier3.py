"""Tier 3 of the prompts: which summaries of the tree a prompt holds, within a budget.

A pure policy over the summary tree (story/summaries.py, which makes and reads the
files): a cut through the tree that tells every summarized tick once, the most
detailed level that fits, and the budget it may fill.
"""

from __future__ import annotations

from collections.abc import Callable

from novel_agent.config.budget import ModelLimits, stage_budget
from novel_agent.config.settings import Config
from novel_agent.story.summaries import SummaryDoc, SummaryTree


def doc_cost(doc: SummaryDoc, count: Callable[[str], int]) -> int:
    """Tokens a doc takes in tier 3 (its block plus the blank line between blocks)."""
    return count(doc.block()) + 1


def select_tier3(tree: SummaryTree, budget_tokens: int, count: Callable[[str], int],
                 upto: int | None = None, stretch: int = 0) -> list[SummaryDoc]:
    """The summaries tier 3 holds within `budget_tokens`, in story order: a cut through
    the tree that tells every summarized tick up to `upto` (default: all of them)
    exactly once, so the recent tiers can take over at `upto + 1` (no range told twice,
    none skipped).

    It starts from the coarsest cut (the roots; a root reaching past `upto` is replaced
    by its children) and, newest first, replaces a doc by its children while the cut
    still fits, stopping at the first that would not -- so each stretch of the story is
    told by the most detailed covering level that fits, and detail never grows going
    back in time. If even the coarsest cut does not fit, the overall summary stands for
    it when it covers exactly the same ticks and fits; else the coarsest cut stays, over
    the budget, and the caller tells its oldest docs in short (the writer's tier 3, the
    planner's story so far): no scene is left untold, whatever the window (at 8,192
    tokens a cut ending inside the newest root, split to its children, outgrew even the
    stretch, and the oldest roots, scenes 1-250 at tick 299, were told nowhere). The
    overall summary is never laid out next to docs it covers too. `stretch`: a larger
    budget the coarsest cut may take whole (a tree at its depth limit whose top outgrew
    the share), without refining it.
    """
    cut = _coarsest(tree, upto)
    total = sum(doc_cost(d, count) for d in cut)
    if budget_tokens < total <= stretch:
        return cut
    overall = tree.overall
    if total > budget_tokens and cut and overall is not None and overall.body.strip() \
            and overall.last == cut[-1].last and doc_cost(overall, count) <= budget_tokens:
        return [overall]
    if total > budget_tokens:     # told coarsely, all of it; the caller shortens the oldest
        return cut
    index = len(cut) - 1
    while index >= 0:
        kids = tree.children(cut[index])
        if not kids:
            index -= 1
            continue
        grown = total - doc_cost(cut[index], count) + sum(doc_cost(k, count) for k in kids)
        if grown > budget_tokens:
            break
        cut[index:index + 1], total = kids, grown
        index += len(kids) - 1
    return cut


def _coarsest(tree: SummaryTree, upto: int | None) -> list[SummaryDoc]:
    """The roots, less what lies after `upto` (a root reaching past it split into its
    children, down to the checkpoints)."""
    out: list[SummaryDoc] = []
    pending = tree.roots()
    while pending:
        doc = pending.pop(0)
        if upto is None or doc.last <= upto:
            out.append(doc)
        elif doc.first <= upto:
            pending[:0] = tree.children(doc)
    return out


def tier3_end(tree: SummaryTree, before: int) -> int:
    """The last tick tier 3 tells when the recent tiers begin at `before`: the end of
    the last checkpoint before it (0 when there is none)."""
    return max((d.last for d in tree.checkpoints() if d.last < before), default=0)


def tier3_budget(config: Config, limits: ModelLimits) -> int:
    """Tokens tier 3 may fill: the writer's budget times `context.tier3_share`."""
    return max(0, int(stage_budget(config, "writer", limits).tokens * config.context.tier3_share))


def planner_overall(tree: SummaryTree, config: Config) -> str:
    """The overall summary the planner sees ("" when include_overall_summary is off;
    tier 3 keeps it regardless)."""
    if tree.overall is None or not config.generation.include_overall_summary:
        return ""
    return tree.overall.body
