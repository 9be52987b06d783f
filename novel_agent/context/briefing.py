"""The prompts of the planner, extractor and summarizer: fixed sections plus item pools.

A `Briefing` is a stage's draft before selection: its fixed sections (the
story bible, the scene to read, the author's note: pinned), its pools of
scored items in priority order (see items.py), and the layout order of all
its sections. `propose_briefing` gives the context engine a draft per
compaction level: the pools filled by `items.select` at that level, every
section then laid out in the fixed order. At the leanest level, a prompt still
over has its items chosen again `within` fewer tokens (what each section must
keep set aside first, so none is emptied while there is room for it). Sections
named `truncatable` may be cut middle-out by the engine as the last resort.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from novel_agent.context.engine import ItemNote, Proposal
from novel_agent.context.items import Pool, select
from novel_agent.context.sections import Context, Section
from novel_agent.text.tokens import TokenCounter


@dataclass(frozen=True)
class Briefing:
    """A stage's sections before selection."""

    stage: str
    fixed: tuple[Section, ...]
    pools: tuple[Pool, ...]            # in priority order
    layout: tuple[str, ...]            # every section's name, in prompt order
    values: dict[str, Any] = field(default_factory=dict)
    truncatable: tuple[str, ...] = ()
    # Pools filled to their share whatever the compaction thresholds say (a checkpoint's
    # scenes in full text when they fit): see engine.Proposal.elastic.
    elastic: tuple[str, ...] = ()

    def with_values(self, **values: Any) -> Briefing:
        """The same briefing with more template values."""
        return replace(self, values={**self.values, **values})

    def with_section(self, section: Section) -> Briefing:
        """The same briefing with one more fixed section, laid out where `layout` names it."""
        assert section.name in self.layout, f"{self.stage} lays out no section {section.name!r}"
        return replace(self, fixed=self.fixed + (section,))

    def with_fixed(self, *sections: Section) -> Briefing:
        """The same briefing with more fixed sections, laid out after the rest."""
        return replace(self, fixed=self.fixed + sections,
                       layout=self.layout + tuple(s.name for s in sections))


def propose_briefing(briefing: Briefing, counter: TokenCounter,
                     budget: int) -> Callable[[int], Proposal]:
    """A function level -> Proposal: the pools filled at that level, laid out in order."""
    fixed_notes = [ItemNote(s.name, s.name, counter.count(s.text), True, "pinned"
                            if s.pinned else "fixed") for s in briefing.fixed if s.text]

    def propose(level: int, total: int | None = None) -> Proposal:
        chosen = select(list(briefing.pools), budget, level, counter.count, total)
        by_name = {s.name: s for s in (*briefing.fixed, *chosen.sections)}
        sections = tuple(by_name[name] for name in briefing.layout if name in by_name)
        context = Context(briefing.stage, sections, dict(briefing.values))

        return Proposal(context, fixed_notes + chosen.notes, truncatable=briefing.truncatable,
                        elastic=briefing.elastic,
                        within=(lambda tokens: propose(level, tokens)) if level >= 3 else None,
                        item_tokens=chosen.used)

    return lambda level: propose(level)
