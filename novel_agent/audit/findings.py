"""A finding of the audit, ConStory-Bench's taxonomy, and the consistency error density.

ConStory-Bench sorts consistency errors into 5 categories and 19 subtypes; every
finding names one, a severity, and two quotes: the sentence of the new scene and
the fact or scene it contradicts. CED (consistency error density) is, per story,
the number of subtypes with at least one quoted error divided by (words / 10,000),
averaged over stories.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

CATEGORIES: dict[str, tuple[str, ...]] = {
    "characterization": ("memory", "knowledge", "skill fluctuation", "forgotten abilities"),
    "factual": ("appearance", "nomenclature", "quantitative"),
    "narrative style": ("perspective", "tone", "style"),
    "timeline and plot": ("absolute time", "duration", "simultaneity", "causeless effect",
                          "causal logic", "abandoned plot element"),
    "world-building": ("core rules", "social norms", "geography"),
}
SUBTYPES: dict[str, str] = {s: cat for cat, subs in CATEGORIES.items() for s in subs}
SEVERITIES = ("minor", "major", "critical")

# The rule kinds, each with its ConStory subtype.
RULES: dict[str, str] = {
    "dead_or_absent": "causal logic",      # a dead or absent character acts or speaks
    "two_places": "simultaneity",          # in two places at the same moment
    "no_travel": "geography",              # moved between consecutive scenes, no travel
    "lost_item": "causeless effect",       # an object used after it was lost or given away
    "nomenclature": "nomenclature",        # a variant of a known name
    "pov_knowledge": "knowledge",          # the POV uses a fact never witnessed nor told
    "clock": "absolute time",              # the story's clock runs backwards
    "weekday": "absolute time",            # a weekday against the story's calendar
    "season": "duration",                  # the opposite season too few days after the last
    "appearance": "appearance",            # eyes, hair, height, build or a scar stated otherwise
    "loop_overdue": "abandoned plot element",
    "repetition": "style",                 # a passage repeated from a recent scene
    "repeated_title": "style",             # a title or an opening repeated
    "voice": "style",                      # a line in another's voice (audit/voices.py)
}


@dataclass(frozen=True)
class Finding:
    """One contradiction: what the new scene says, and what it contradicts."""

    kind: str            # a RULES key, or "llm"
    subtype: str         # one of SUBTYPES
    severity: str        # one of SEVERITIES
    scene: int           # the scene the finding is in
    quote: str           # the sentence of that scene
    against: str         # the fact or scene sentence it contradicts
    against_scene: int = 0   # the scene that established `against` (0: unknown)
    message: str = ""    # one line: what is wrong
    source: str = "rule"   # "rule" or "llm"

    @property
    def category(self) -> str:
        return SUBTYPES.get(self.subtype, "")

    @property
    def rank(self) -> int:
        return SEVERITIES.index(self.severity) if self.severity in SEVERITIES else 0

    def key(self) -> tuple[str, str, str]:
        """What makes two findings the same one (for comparing a revision)."""
        return (self.kind, self.subtype, self.message)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Finding:
        """A finding read back from a plan record or held.yaml (unknown keys ignored)."""
        fields = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        fields.setdefault("kind", "unknown")
        fields.setdefault("subtype", "")
        fields.setdefault("severity", "minor")
        fields.setdefault("scene", 0)
        fields.setdefault("quote", "")
        fields.setdefault("against", "")
        return cls(**fields)

    def line(self) -> str:
        """One line for a tick's output."""
        where = f" (scene {self.against_scene})" if self.against_scene else ""
        return (f"[{self.severity}] {self.subtype}: {self.message} — \"{self.quote}\" vs "
                f"\"{self.against}\"{where}")


def at_least(findings: Iterable[Finding], severity: str) -> list[Finding]:
    """The findings of `severity` or worse."""
    floor = SEVERITIES.index(severity)
    return [f for f in findings if f.rank >= floor]


def ced(subtypes_with_errors: int, words: int) -> float:
    """One story's consistency error density: distinct subtypes with a quoted error per
    10,000 words (0 for an empty story)."""
    return subtypes_with_errors / (words / 10_000) if words > 0 else 0.0


def book_ced(findings: Iterable[Finding], words: int) -> float:
    """CED of one story from its findings: only those with a quote count."""
    return ced(len({f.subtype for f in findings if f.quote and f.subtype in SUBTYPES}), words)


def mean_ced(stories: Sequence[tuple[Iterable[Finding], int]]) -> float:
    """CED over stories as ConStory-Bench reports it: the per-story CEDs averaged."""
    values = [book_ced(f, w) for f, w in stories]
    return sum(values) / len(values) if values else 0.0
