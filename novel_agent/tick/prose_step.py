"""A tick's part in the book's prose: the phrases it has overused, and its style.

Before the writer: the phrases of the slop list (text.prose's built-in one and
style.yaml's `avoid`) that the last `style.recent_scenes` scenes have used
`style.max_phrase_uses` times or more (one more would be too many) are the writer's
one line of phrases to avoid (`avoid_line`).

After it: the scene is checked (`check`): a listed phrase it uses while the scene and
the ones before it, together, use it more than `style.max_phrase_uses` times is over;
and with a style.yaml, the scene's distance from it is measured (text.prose.distance),
its person or tense wrong when that part of the distance reaches WRONG (the text is
that sure of a person or tense the style does not have). Either is a notice; where
`style.rewrite` says (`local`: on an embedded local model, which drifts most), a scene
in the wrong person or tense is written again once, told what to mend, and the better
of the two kept (`Checked.rank`: fewer faults of person and tense, then fewer phrases
over, then nearer the style); then its stale sentences (a phrase over, or ECHO words in
a row an earlier scene said) are each written again on their own (`stale_sentences`,
`mended`, `splice`). What was measured is the plan record's `prose`.

No logit bias and no grammar hold the phrases back. A bias works on tokens, not
phrases: OpenAI's `logit_bias` takes a model's token ids (a tokenizer per model, and
" sense" is not "sense"), and llama.cpp's takes strings but biases each of their tokens
wherever it comes, so banning "a sense of unease" would ban "a" and "sense" in every
sentence. A GBNF grammar can only forbid a phrase by spelling out every text that does
not hold it, which is not a grammar one writes for a list of two hundred phrases.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from novel_agent.config.settings import StyleConfig
from novel_agent.text.prose import (
    FUNCTION_WORDS,
    Distance,
    PhraseList,
    distance,
    fingerprint,
    phrase_list,
    sentence_ngrams,
    sentences,
    slop_hits,
)

WRONG = 0.5          # a person or tense part of the distance at which the scene is told wrong
SHOWN = 8            # phrases the writer's line names at most
AVOID = "Never use these phrases, which this book has used too often: {phrases}."
MEND = "Write this scene anew, {what}. Keep its events and people."


def phrases_of(style: Mapping[str, Any] | None) -> PhraseList:
    """The phrases a book avoids: the built-in list and its style.yaml's `avoid`."""
    return phrase_list((style or {}).get("avoid") or [])


def counted(bodies: Sequence[str], phrases: PhraseList) -> Counter[str]:
    """How often each listed phrase occurs in `bodies` (the last scenes)."""
    return Counter(hit.phrase for body in bodies for hit in slop_hits(body, phrases))


def used_up(before: Counter[str], allowed: int) -> list[str]:
    """The phrases `before` used `allowed` times or more (at least once), most used first,
    at most SHOWN: one more use would be too many."""
    return [p for p, n in before.most_common() if n >= max(1, allowed)][:SHOWN]


def avoid_line(phrases: Sequence[str]) -> str:
    """The writer's line of phrases to avoid ("" when there are none)."""
    return AVOID.format(phrases=", ".join(f'"{p}"' for p in phrases)) if phrases else ""


@dataclass
class Checked:
    """What the check found of one scene."""

    over: dict[str, int] = field(default_factory=dict)   # phrase -> uses in this scene
    far: Distance | None = None                          # from style.yaml, when there is one
    wrong: dict[str, str] = field(default_factory=dict)  # "person"/"tense" -> what the scene has

    @property
    def faults(self) -> bool:
        return bool(self.over or self.wrong)

    def rank(self) -> tuple[int, int, float]:
        """Lower is better: faults of person and tense, phrase uses over, distance."""
        return (len(self.wrong), sum(self.over.values()), self.far.total if self.far else 0.0)

    def record(self) -> dict[str, Any]:
        """What the plan record keeps (`prose`)."""
        out: dict[str, Any] = {}
        if self.far is not None:
            out |= {"distance": self.far.total,
                    "farthest": self.far.worst() if self.far.total else None,
                    "parts": dict(self.far.parts)}
        if self.over:
            out["over"] = dict(self.over)
        return out


def check(prose: str, before: Counter[str], phrases: PhraseList, allowed: int,
          style: Mapping[str, Any] | None) -> Checked:
    """The scene's phrases over `allowed` (with `before`, the last scenes' counts), and its
    distance from `style` with what of person and tense is wrong (see the module's
    docstring)."""
    mine = Counter(hit.phrase for hit in slop_hits(prose, phrases))
    over = {p: n for p, n in mine.items() if before[p] + n > allowed}
    if not style:
        return Checked(over)
    fp = fingerprint(prose, phrases)
    far = distance(fp, style)
    wrong = {part: getattr(fp, part) for part in ("person", "tense")
             if far.parts.get(part, 0.0) >= WRONG}
    return Checked(over, far, wrong)


def rewrites(config: StyleConfig, local: bool) -> bool:
    """Whether a scene with faults is written again (style.rewrite; `local`: the writer
    is an embedded local model)."""
    return config.rewrite == "always" or (config.rewrite == "local" and local)


def mend(found: Checked, style: Mapping[str, Any] | None) -> str:
    """What the writer is told when it writes the scene again."""
    what = []
    if found.wrong and style:
        told = " and ".join(f"the {style[p]} {p}" for p in ("person", "tense") if p in found.wrong)
        what.append(f"told in {told}, as the rest of the book is")
    if found.over:
        what.append("without these phrases, which this book has used too often: "
                    + ", ".join(f'"{p}"' for p in found.over))
    return MEND.format(what="; ".join(what))


def notice(tick: int, found: Checked, config: StyleConfig,
           style: Mapping[str, Any] | None) -> str:
    """One line saying what is wrong with scene `tick` ("" when nothing is)."""
    parts = []
    for part, has in found.wrong.items():
        parts.append(f"it is told in the {has} {part}, style.yaml's is {(style or {})[part]}")
    if found.over:
        uses = ", ".join(f'"{p}" ({n}x)' for p, n in found.over.items())
        parts.append(f"it uses {uses}, over style.max_phrase_uses ({config.max_phrase_uses} in "
                     f"a scene and the {config.recent_scenes} before it)")
    return f"scene {tick}: " + "; ".join(parts) if parts else ""


# -- mending sentences ---------------------------------------------------------------
# A stale sentence (one with a listed phrase the scene uses past its allowance, or five
# words together that one of the last scenes said too) is written again on its own, as
# small a task as a small model does well; the answer is taken only when it is one
# sentence of about the same size, in the same quotes, without what made the old stale.

MENDS = 6            # sentences a scene has mended at most
ECHO = 5             # words in a row that make a sentence an echo of an earlier scene
MEND_SYSTEM = "You are a fiction editor. You rewrite one sentence of a novel at a time."
MEND_ASK = ("Rewrite this sentence in fresh words of your own. Keep what happens, who "
            "does it, and the person and tense. Do not use the words \"{words}\". Answer "
            "with the new sentence only.\n\nSentence: {sentence}")
PREAMBLES = ("here", "sure", "rewritten", "new sentence", "sentence:", "certainly")


@dataclass(frozen=True)
class Stale:
    """A sentence to mend: where it starts in the scene, and the words it must not use."""

    sentence: str
    start: int
    words: str


def _grams(text: str) -> set[tuple[str, ...]]:
    return set(sentence_ngrams([text], (ECHO,)))


def stale_sentences(prose: str, over: Sequence[str], phrases: PhraseList,
                    earlier: Sequence[str], most: int = MENDS) -> list[Stale]:
    """The scene's sentences to mend, in order, at most `most`: those with a phrase of
    `over`, then those saying ECHO words in a row that one of `earlier` (the last scenes)
    says."""
    said = set().union(*(_grams(body) for body in earlier)) if earlier else set()
    out: list[Stale] = []
    at = 0
    for sentence in sentences(prose):
        start = prose.find(sentence, at)
        if start < 0:
            continue
        at = start + len(sentence)
        hit = next((h.phrase for h in slop_hits(sentence, phrases) if h.phrase in over), None)
        echo = None if hit else next(iter(sorted(_grams(sentence) & said)), None)
        if hit or echo:
            out.append(Stale(sentence, start, hit or " ".join(echo or ())))
    slop = [s for s in out if s.words in over]
    return (slop + [s for s in out if s.words not in over])[:most]


def mend_messages(stale: Stale) -> list[dict[str, str]]:
    """The one request that mends `stale`."""
    return [{"role": "system", "content": MEND_SYSTEM},
            {"role": "user", "content": MEND_ASK.format(words=stale.words.replace("*", "…"),
                                                        sentence=stale.sentence)}]


def mended(stale: Stale, answer: str, phrases: PhraseList) -> str | None:
    """The answer as the sentence's new text, or None when it will not do: not one line,
    a preamble, a size far off, other quotes, the same words, a listed phrase, the
    words it was asked not to use, or not a sentence of the same sense (`same_sense`)."""
    text = " ".join(answer.split())
    old = stale.sentence
    if not old.startswith(("\"", "“", "'", "‘")):
        text = text.strip("\"“”")
    words, was = len(text.split()), len(old.split())
    if (not text or "\n" in answer.strip() or text.lower().startswith(PREAMBLES)
            or not was // 2 <= words <= 2 * was + 4 or len(sentences(text)) > 2
            or _quotes(text) != _quotes(old) or text == old or slop_hits(text, phrases)
            or stale.words.lower() in text.lower()
            or tuple(stale.words.lower().split()) in _grams(text)
            or not same_sense(old, text, stale.words)):
        return None
    return text


SENSE_KEPT = 0.5     # of a sentence's content words (its stale words aside), a mend keeps this
_FUNCTION = frozenset(FUNCTION_WORDS)


def same_sense(old: str, new: str, stale: str = "") -> bool:
    """Whether `new` says what `old` said: it keeps SENSE_KEPT of `old`'s content words
    (not function words, not the `stale` words it was to lose; a word's first five
    letters, so "discovers" keeps "discovered"), when `old` has two or more. The 1.5B
    mended sentences into "She discovered there were issues with it.", a sentence of
    its own.

    >>> same_sense("The lamp guttered as Mara climbed the tower stairs.",
    ...            "The lamp flickered as Mara climbed the tower stairs.")
    True
    >>> same_sense("A wave of dread washed over Mara at the cracked apple.",
    ...            "She discovered there were issues with it.", "washed over")
    False
    """
    lost = set(_content(stale))
    had = {w for w in _content(old) if w not in lost}
    if len(had) < 2:
        return True
    return len(had & set(_content(new))) >= SENSE_KEPT * len(had)


def _content(text: str) -> list[str]:
    return [w[:5] for w in re.findall(r"[a-z']+", text.casefold())
            if w not in _FUNCTION and len(w) > 2]


def _quotes(text: str) -> int:
    return sum(text.count(q) for q in "\"“”")


def splice(prose: str, mends: Sequence[tuple[Stale, str]]) -> str:
    """`prose` with each stale sentence replaced by its mended text."""
    out, at = [], 0
    for stale, text in sorted(mends, key=lambda m: m[0].start):
        out += [prose[at:stale.start], text]
        at = stale.start + len(stale.sentence)
    return "".join(out) + prose[at:]
