"""A tick's part in the payoffs of a book with an outline (story/outline/payoffs.py).

In the final act no loop opens: the planner's open_loop calls are dropped before
its tools run (`closed_plan`), the extractor's loops_opened before its answer is
applied (`closed_extraction`), each said in one line; what the plan record keeps
is what was applied, so a replay opens none either. At the commit, each open
loop's payoff and status are settled (`settle_step`); what was set is the plan
record's `payoffs`. A book without an outline (no standing) is left as it was.
"""

from __future__ import annotations

from dataclasses import replace

from novel_agent.story.decisions import Extraction, Plan
from novel_agent.story.memory.records import Loop
from novel_agent.story.memory.store import Memory
from novel_agent.story.outline.payoffs import final_act, named_payoffs, settle, settled_lines
from novel_agent.story.outline.standing import BookStanding


def closing(at: BookStanding | None) -> bool:
    """Whether the next scene is in a final act, where no loop opens."""
    return at is not None and final_act(at.outline, at.position)


def closed_plan(plan: Plan, at: BookStanding | None) -> tuple[Plan, str]:
    """The plan without its open_loop calls in the final act, and the line saying so
    ("" when nothing was dropped)."""
    opened = [c for c in plan.tool_calls if c.tool == "open_loop"]
    if not opened or not closing(at):
        return plan, ""
    said = "; ".join(repr((c.detail or c.name)[:60]) for c in opened)
    return (replace(plan, tool_calls=[c for c in plan.tool_calls if c.tool != "open_loop"]),
            f"the final act opens no loop: the planner's open_loop {said} was dropped")


def closed_extraction(extraction: Extraction, at: BookStanding | None) -> tuple[Extraction, str]:
    """The extraction without its loops_opened in the final act, and the line saying so."""
    if not extraction.loops_opened or not closing(at):
        return extraction, ""
    said = "; ".join(repr(text[:60]) for text in extraction.loops_opened)
    return (replace(extraction, loops_opened=[]),
            f"the final act opens no loop: the extractor's loops_opened {said} not recorded")


def settle_step(memory: Memory, plan: Plan, at: BookStanding | None,
                tick: int) -> tuple[dict[str, Loop], list[str]]:
    """Each open loop's payoff and status after scene `tick` (in place): what was set, by
    loop id, and one line each; nothing without an outline."""
    if at is None:
        return {}, []
    asked = ((c.detail or c.name, c.target) for c in plan.tool_calls if c.tool == "open_loop")
    named = named_payoffs(asked, memory.find_loop, at.outline, at.position)
    settled = settle(memory.loops, at.outline, at.position, tick, named)
    return settled, settled_lines(settled)
