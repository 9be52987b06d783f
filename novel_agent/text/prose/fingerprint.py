"""A text's fingerprint (every prose measure at once), its distance from a style, and how
a measure degrades over a book.

`fingerprint(text)` measures a text; `Fingerprint.to_dict()` is what `style.yaml` holds
of it and `Fingerprint.from_dict` reads it back. `distance(fp, style)` says how far a
text is from a style, in [0, 1], part by part, so that "wrong person" or "wrong tense"
shows by name; a style given as a mapping (style.yaml as read) is compared on the keys
it has, so an author who deletes "tense" from it stops caring about tense.
`degradation(values)` compares a measure over the last quarter of a book's scenes with
the first. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from statistics import fmean
from typing import Any, NamedTuple

from novel_agent.text.prose.functionwords import (
    distinctive_words,
    function_profile,
    profile_distance,
)
from novel_agent.text.prose.measures import mattr, mtld, punctuation, spread
from novel_agent.text.prose.narration import person_of, tense_of
from novel_agent.text.prose.ngrams import repeats, sentence_ngrams
from novel_agent.text.prose.phrases import PhraseList, per_thousand, slop_hits
from novel_agent.text.prose.split import dialogue, paragraphs, sentences, words

# How much each part weighs in the total distance; person and tense are the faults a
# reader sees first.
WEIGHTS: dict[str, float] = {
    "person": 2.0, "tense": 2.0, "sentence_mean": 1.0, "sentence_sd": 1.0,
    "paragraph_mean": 1.0, "dialogue_share": 1.0, "mtld": 1.0, "punctuation": 1.0,
    "function_words": 1.0,
}
# Below this many per 1,000 words a difference between two punctuation rates is noise
# (one semicolon in a 300-word scene is 3.3 per 1,000).
PUNCTUATION_FLOOR = 5.0


@dataclass
class Fingerprint:
    """Every measure of one text (lengths in words; rates per 1,000 words)."""

    words: int = 0
    sentences: int = 0
    paragraphs: int = 0
    sentence_mean: float = 0.0          # words per sentence
    sentence_sd: float = 0.0            # its standard deviation: the spread
    paragraph_mean: float = 0.0         # words per paragraph
    dialogue_share: float = 0.0         # share of the words inside quotes, 0..1
    person: str = "third"
    person_confidence: float = 0.0
    tense: str = "past"
    tense_confidence: float = 0.0
    mtld: float = 0.0
    mattr: float = 0.0
    slop_per_1000: float = 0.0
    slop: int = 0                       # slop phrases found
    repeats_per_1000: float = 0.0       # repeated 3- to 5-grams within the text
    punctuation: dict[str, float] = field(default_factory=dict)
    function_words: dict[str, float] = field(default_factory=dict)
    distinctive: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The fingerprint as plain values (YAML- and JSON-ready)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Fingerprint:
        """A fingerprint from `to_dict`'s keys; missing or unknown keys are ignored (a
        missing one keeps its default)."""
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


def fingerprint(text: str, phrases: PhraseList | None = None,
                background: Mapping[str, int] | None = None) -> Fingerprint:
    """Measure `text`: its shape, voice, diversity, slop (against `phrases`, the built-in
    list by default) and habits; distinctive words against `background` counts."""
    ws = words(text)
    n = len(ws)
    paras = paragraphs(text)
    said = [s for p in paras for s in sentences(p)]
    sent = spread([len(words(s)) for s in said])
    parts = [(len(words(p.text)), p) for p in dialogue(text)]
    narrated = [w for _, p in parts if not p.speech for w in words(p.text)]
    spoken = sum(k for k, p in parts if p.speech)
    who, when = person_of(narrated), tense_of(narrated)
    hits = slop_hits(text, phrases)
    return Fingerprint(
        words=n, sentences=len(said), paragraphs=len(paras),
        sentence_mean=sent.mean, sentence_sd=sent.sd,
        paragraph_mean=spread([len(words(p)) for p in paras]).mean,
        dialogue_share=round(spoken / (spoken + len(narrated)), 4) if spoken else 0.0,
        person=who.value, person_confidence=who.confidence,
        tense=when.value, tense_confidence=when.confidence,
        mtld=mtld(ws), mattr=mattr(ws),
        slop_per_1000=per_thousand(len(hits), n), slop=len(hits),
        repeats_per_1000=per_thousand(repeats(sentence_ngrams(said)), n),
        punctuation=punctuation(text, n), function_words=function_profile(ws),
        distinctive=distinctive_words(ws, background))


class Distance(NamedTuple):
    """How far a text is from a style: the weighted total and each part, all in [0, 1]."""

    total: float
    parts: dict[str, float]

    def worst(self) -> str | None:
        """The name of the part farthest off (None when nothing was compared)."""
        return max(self.parts, key=lambda k: self.parts[k]) if self.parts else None


def _relative(a: float, b: float, floor: float = 0.0) -> float:
    """|a - b| over the larger (or `floor`), in [0, 1]."""
    top = max(abs(a), abs(b), floor)
    return min(1.0, abs(a - b) / top) if top else 0.0


def _label_part(fp: Fingerprint, style: Mapping[str, Any], name: str) -> float:
    """0 when the text's label is the style's, else as sure as the text's guess is."""
    if fp.words == 0:
        return 0.0
    return 0.0 if getattr(fp, name) == style[name] else getattr(fp, f"{name}_confidence")


def _punctuation_part(mine: Mapping[str, float], theirs: Mapping[str, float]) -> float:
    marks = set(mine) & set(theirs)
    if not marks:
        return 0.0
    return fmean(_relative(float(mine[m]), float(theirs[m]), PUNCTUATION_FLOOR) for m in marks)


def _rates(value: Any) -> dict[str, float]:
    """A mapping's numeric entries (an edited style.yaml may hold anything)."""
    if not isinstance(value, Mapping):
        return {}
    return {str(k): float(v) for k, v in value.items()
            if isinstance(v, int | float) and not isinstance(v, bool)}


def distance(fp: Fingerprint, style: Fingerprint | Mapping[str, Any]) -> Distance:
    """How far the text of `fp` is from `style` (a fingerprint, or the mapping style.yaml
    holds): person and tense are 0 when they agree, else the text's confidence in its own
    guess; lengths and MTLD their relative difference; dialogue share its plain
    difference; punctuation the mean relative difference of its marks' rates (rates
    under PUNCTUATION_FLOOR count as that floor); function words `profile_distance`.
    Only the parts `style` gives are compared; the total is their WEIGHTS-weighted mean.
    """
    target = style.to_dict() if isinstance(style, Fingerprint) else dict(style)
    parts: dict[str, float] = {}
    for name in ("person", "tense"):
        if isinstance(target.get(name), str):
            parts[name] = _label_part(fp, target, name)
    for name in ("sentence_mean", "sentence_sd", "paragraph_mean", "mtld"):
        if isinstance(target.get(name), int | float) and not isinstance(target[name], bool):
            parts[name] = _relative(getattr(fp, name), float(target[name]))
    if isinstance(target.get("dialogue_share"), int | float) and \
            not isinstance(target["dialogue_share"], bool):
        parts["dialogue_share"] = min(1.0, abs(fp.dialogue_share - target["dialogue_share"]))
    marks, profile = _rates(target.get("punctuation")), _rates(target.get("function_words"))
    if marks:
        parts["punctuation"] = _punctuation_part(fp.punctuation, marks)
    if profile:
        parts["function_words"] = profile_distance(fp.function_words, profile)
    parts = {k: round(v, 4) for k, v in parts.items()}
    weight = sum(WEIGHTS[k] for k in parts)
    total = sum(WEIGHTS[k] * v for k, v in parts.items()) / weight if weight else 0.0
    return Distance(round(total, 4), parts)


class Degradation(NamedTuple):
    """A measure over the first quarter of a book's scenes and over the last: their
    means, and the change (last minus first)."""

    first: float
    last: float
    change: float
    scenes: int          # scenes in each quarter


def degradation(values: Sequence[float | None]) -> Degradation | None:
    """The mean of the last quarter of `values` (scene by scene, in order; None where a
    scene has no value) against the first quarter's; a quarter is at least one scene.
    None for fewer than two values.

    >>> degradation([1, 1, 2, 2, 3, 3, 4, 4])
    Degradation(first=1.0, last=4.0, change=3.0, scenes=2)
    """
    known = [float(v) for v in values if v is not None]
    if len(known) < 2:
        return None
    q = max(1, len(known) // 4)
    first, last = fmean(known[:q]), fmean(known[-q:])
    return Degradation(round(first, 4), round(last, 4), round(last - first, 4), q)
