"""Fitting a prompt into its budget: graduated compaction, then middle-out truncation.

A stage's policy proposes drafts for a compaction level (0 = everything its
tiers hold, 3 = the leanest it has). The engine renders and counts each level
until usage falls under the next threshold; if the prompt is still over, it
gives the proposal's items the most tokens that fit (`within`: least relevant
first), then empties its `droppable` sections in order while it is over, then
truncates the largest truncatable section middle-out, and raises
ContextOverflowError when the pinned parts alone cannot fit. The count
is of the request exactly as it will be sent (messages plus chat overhead).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from novel_agent.context.sections import Context
from novel_agent.errors import ContextOverflowError
from novel_agent.text.tokens import TokenCounter

TRUNCATION_MARKER = "\n\n[… {n} tokens cut from the middle to fit the budget …]\n\n"


@dataclass(frozen=True)
class ItemNote:
    """One candidate item: whether it went in, where, in which form, and why."""

    key: str
    section: str
    tokens: int
    included: bool
    reason: str
    score: float | None = None    # its relevance, for items chosen by score
    form: str = ""                # "full", "line" or "name": how much of it went in


@dataclass
class Proposal:
    """What a stage's policy offers at one compaction level."""

    context: Context
    notes: list[ItemNote] = field(default_factory=list)
    truncatable: tuple[str, ...] = ()   # section names that may be cut middle-out
    droppable: tuple[str, ...] = ()     # emptied in this order, before any cut, while over
    # Sections sized to the room the rest leaves (retrieval up to the target fill): not
    # counted against the compaction thresholds, which steer the other sections.
    elastic: tuple[str, ...] = ()
    state: dict = field(default_factory=dict)    # carried to the next tick (tier bounds)
    events: list[str] = field(default_factory=list)   # what moved this time, for the report
    # At the leanest level, the same draft with its items chosen within a number of
    # tokens (least relevant first to their barest forms, then out; what each section
    # keeps set aside first), and the tokens they take here: a prompt still over its
    # budget is given the most that fits, before any section is dropped or cut.
    within: Callable[[int], Proposal] | None = None
    item_tokens: int = 0


@dataclass
class Fitted:
    """A prompt that fits: its messages, the context they came from, and how it got there."""

    messages: list[dict[str, str]]
    context: Context
    tokens: int
    level: int
    notes: list[ItemNote]
    truncated: list[str]
    state: dict
    events: list[str]
    dropped: list[str] = field(default_factory=list)


Render = Callable[[Context], list[dict[str, str]]]


def pinned_only(context: Context) -> Context:
    """The context with every unpinned section emptied (same order)."""
    return replace(context, sections=tuple(
        s if s.pinned else replace(s, text="", items=()) for s in context.sections))


def _pinned_alone(context: Context, truncatable: Sequence[str] = ()) -> Context:
    """The context with its pinned parts alone (those `truncatable` emptied too)."""
    bare = pinned_only(context)
    if truncatable:
        bare = replace(bare, sections=tuple(replace(s, text="") if s.name in truncatable else s
                                            for s in bare.sections))
    return bare


def pinned_tokens(context: Context, render: Render, counter: TokenCounter,
                  truncatable: Sequence[str] = ()) -> int:
    """The tokens of the prompt with its pinned parts alone (those `truncatable` emptied)."""
    return counter.count_messages(render(_pinned_alone(context, truncatable)))


def check_pinned(context: Context, render: Render, counter: TokenCounter, budget: int,
                 truncatable: Sequence[str] = ()) -> int:
    """Raise ContextOverflowError if the pinned parts alone exceed the budget."""
    bare = _pinned_alone(context, truncatable)
    tokens = counter.count_messages(render(bare))
    if tokens <= budget:
        return tokens
    pinned = [s for s in bare.sections if s.pinned and s.text]
    worst = max(pinned, key=lambda s: counter.count(s.text), default=None)
    name = worst.name if worst else "instructions"
    size = counter.count(worst.text) if worst else tokens
    raise ContextOverflowError(
        f"the pinned parts of the {context.stage} prompt need {tokens:,} tokens but the budget "
        f"is {budget:,}: the largest is '{name}' ({size:,} tokens); shorten it or raise "
        f"context.max_prompt_tokens / context.window", section=name, tokens=size, budget=budget,
        need=tokens)


def fit(propose: Callable[[int], Proposal], render: Render, counter: TokenCounter, budget: int,
        thresholds: Sequence[float]) -> Fitted:
    """Find the lowest compaction level whose prompt is under the next threshold."""
    level, proposal = 0, propose(0)
    if pinned_tokens(proposal.context, render, counter, proposal.truncatable) > budget:
        level, proposal = 3, propose(3)     # (a brief may tell less of its people there)
    check_pinned(proposal.context, render, counter, budget, proposal.truncatable)
    messages = render(proposal.context)
    tokens = counter.count_messages(messages)
    while level < 3 and (tokens > budget or  # elastic sections too: never over the budget
                         (tokens - _elastic(proposal, counter)) / max(budget, 1) >= thresholds[level]):
        level += 1
        proposal = propose(level)
        messages = render(proposal.context)
        tokens = counter.count_messages(messages)
    if tokens > budget and proposal.within is not None:
        proposal, messages, tokens = _squeezed(proposal, render, counter, budget)
    context, notes, dropped = proposal.context, list(proposal.notes), []
    for name in proposal.droppable:
        if tokens <= budget:
            break
        if context.text(name):
            context, notes = _drop(context, notes, name, level)
            dropped.append(name)
            messages = render(context)
            tokens = counter.count_messages(messages)
    truncated: list[str] = []
    for _ in range(4):
        if tokens <= budget:
            break
        context, cut = _truncate_largest(context, proposal.truncatable, counter, tokens - budget)
        if cut is None:
            check_pinned(context, render, counter, budget)
            break
        truncated.append(cut)
        messages = render(context)
        tokens = counter.count_messages(messages)
    if tokens > budget:
        raise ContextOverflowError(
            f"the {context.stage} prompt needs {tokens:,} tokens and cannot be cut to the "
            f"budget of {budget:,}", section="prompt", tokens=tokens, budget=budget, need=tokens)
    return Fitted(messages, context, tokens, level, notes, sorted(set(truncated)),
                  proposal.state, proposal.events, dropped)


def _squeezed(proposal: Proposal, render: Render, counter: TokenCounter,
              budget: int) -> tuple[Proposal, list[dict[str, str]], int]:
    """The proposal with its items within the most tokens that let the prompt fit the
    budget (found by halving: fewer tokens for items never make a longer prompt); with
    none at all if even that is over (then sections are dropped, or cut, as ever)."""
    assert proposal.within is not None
    low, high = 0, proposal.item_tokens - 1
    best = None
    while low <= high:
        middle = (low + high) // 2
        leaner = proposal.within(middle)
        messages = render(leaner.context)
        tokens = counter.count_messages(messages)
        if tokens <= budget:
            best, low = (leaner, messages, tokens), middle + 1
        else:
            high = middle - 1
    if best is None:
        leaner = proposal.within(0)
        messages = render(leaner.context)
        best = leaner, messages, counter.count_messages(messages)
    return best


def _elastic(proposal: Proposal, counter: TokenCounter) -> int:
    """Tokens of the proposal's elastic sections."""
    return sum(counter.count(proposal.context.text(name)) for name in proposal.elastic
               if proposal.context.text(name))


def _drop(context: Context, notes: list[ItemNote], name: str,
          level: int) -> tuple[Context, list[ItemNote]]:
    """The context with section `name` emptied, its items noted as left out."""
    why = f"dropped whole: the prompt was over its budget at compaction level {level}"
    notes = [replace(n, included=False, reason=why) if n.section == name and n.included else n
             for n in notes]
    return replace(context, sections=tuple(replace(s, text="", items=()) if s.name == name
                                           else s for s in context.sections)), notes


def _truncate_largest(context: Context, names: Sequence[str], counter: TokenCounter,
                      excess: int) -> tuple[Context, str | None]:
    candidates = [s for s in context.sections if s.name in names and s.text]
    if not candidates:
        return context, None
    target = max(candidates, key=lambda s: counter.count(s.text))
    size = counter.count(target.text)
    keep = max(0, size - excess - 16)     # 16: room for the truncation marker
    text = counter.truncate_middle(target.text, keep, TRUNCATION_MARKER) if keep else ""
    if text == target.text:
        return context, None
    sections = tuple(replace(s, text=text) if s is target else s for s in context.sections)
    return replace(context, sections=sections), target.name
