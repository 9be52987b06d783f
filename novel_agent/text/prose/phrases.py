"""Slop: the stock phrases of machine prose, found in a text with their light inflections.

`SLOP` is the built-in list: phrases a reader of much model-written fiction learns to
dread ("a sense of unease", "couldn't shake the feeling", "a testament to"), written
for this project after the kind of lists public benchmarks of long-form writing
publish. A `PhraseList` is such a list made ready to match (`phrase_list(extra)`: the
built-in one plus a project's own `style.avoid`); `slop_hits(text, phrases)` finds them.

A phrase matches case-insensitively, whatever the inflection of its words ("sent
shivers down" matches "sends shivers down" and "sending shivers down"; "couldn't
shake the feeling" matches "can not shake the feelings"), with curly and straight
apostrophes alike and "n't" read as "not". A `*` in a phrase stands for any one word
("let out a breath * did not know"). Where phrases overlap in a text, the longest
found first counts, once. Pure: no I/O.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from novel_agent.text.prose.split import WORD

WILDCARD = "*"

SLOP: tuple[str, ...] = (
    # feelings named instead of shown
    "a sense of unease", "a sense of dread", "a sense of foreboding", "a sense of purpose",
    "a sense of belonging", "a sense of calm", "a sense of wonder", "a wave of relief",
    "a wave of nausea", "a pang of guilt", "a pang of regret", "a flicker of hope",
    "a glimmer of hope", "a flicker of recognition", "a mix of fear and",
    "a mixture of fear and", "a knot in * stomach", "a knot formed in",
    "couldn't shake the feeling", "couldn't help but", "couldn't help but feel",
    "an unspoken understanding", "unspoken promise", "a newfound sense",
    "newfound determination", "renewed determination", "steely determination",
    "determined to uncover the truth", "uncover the truth", "the truth that lay",
    "a chill ran down", "sent shivers down", "sent a shiver down", "a shiver ran down",
    "shivers down * spine", "a shiver down * spine", "heart pounding in * chest",
    "heart pounded in * chest", "heart raced", "breath caught in * throat", "breath caught",
    # measured in the books of issue 51 (an embedded 1.5B on an unseen premise)
    "wash over her", "wash over him", "wash over me", "wash over them",
    "for what seemed like an eternity", "an inexplicable sense of", "no turning back",
    "let out a breath * did not know", "a breath * didn't know * was holding",
    "released a breath", "blood ran cold", "stomach churned", "a lump in * throat",
    "eyes widened in", "eyes sparkled with", "eyes gleamed with", "a glint in * eye",
    "a hint of a smile", "a ghost of a smile", "a wry smile", "a knowing smile",
    "a mischievous glint", "voice barely above a whisper", "barely above a whisper",
    "voice dripping with", "a voice like velvet", "jaw clenched", "fists clenched",
    "hung heavy in the air", "hung heavy", "thick with tension", "the tension was palpable",
    "tension crackled", "electric with", "the air was thick with", "the weight of the world",
    "the weight of * words", "weight of * gaze", "the gravity of the situation",
    # the world as a stage set
    "a testament to", "stood as a testament", "a tapestry of", "rich tapestry",
    "the intricate dance", "a delicate dance", "a symphony of", "a kaleidoscope of",
    "a cacophony of", "a labyrinth of", "a myriad of", "a beacon of hope",
    "a beacon of light", "the fabric of reality", "the very fabric of",
    "bathed in the glow", "bathed in golden light", "cast long shadows", "dappled sunlight",
    "the scent of * hung", "the air was heavy with", "an eerie silence", "an eerie glow",
    "an otherworldly glow", "a deafening silence", "silence stretched between",
    "the silence was deafening", "the world seemed to hold its breath",
    "time seemed to slow", "time stood still", "in the blink of an eye",
    "little did * know", "unbeknownst to", "as if on cue", "the calm before the storm",
    "the dead of night", "the stillness of the night", "shadows danced",
    "danced across the", "whispers of the past", "echoes of the past",
    "a reminder of the", "a stark reminder", "a stark contrast", "in stark contrast",
    "sent ripples through", "secrets that lay hidden", "long-forgotten secrets",
    "ancient secrets", "hidden secrets", "nestled in the heart of",
    "nestled between", "the heart of the city", "a world of possibilities",
    "the possibilities were endless", "a journey of self-discovery",
    # abstract stakes, morals and summing up
    "a force to be reckoned with", "the stakes had never been higher",
    "the stakes were high", "nothing would ever be the same",
    "things would never be the same", "little did they know", "only time would tell",
    "in the grand scheme of things", "a new chapter", "the beginning of something",
    "the journey ahead", "the road ahead", "whatever lay ahead", "what lay ahead",
    "what the future held", "the future held", "ready to face whatever",
    "face whatever came", "the power of friendship", "the bonds of friendship",
    "an unbreakable bond", "a bond that", "stronger together", "together they would",
    "a glimmer of something", "something shifted", "something shifted inside",
    "a shift in the air", "deep down * knew", "in that moment", "at that moment * realized",
    "it was then that", "it dawned on", "a realization dawned", "a wave of realization",
    "the realization hit", "the truth hit", "hit * like a ton of bricks",
    "a rollercoaster of emotions", "a whirlwind of emotions", "a torrent of emotions",
    "emotions swirled", "thoughts swirled", "mind raced", "a storm of emotions",
    "every fiber of * being", "to the core", "shook * to the core",
    "with newfound resolve", "steeled * resolve", "steeled * nerves", "squared * shoulders",
    "took a deep breath", "drew a deep breath", "a deep breath and",
    "with a heavy heart", "a heavy heart", "heart swelled with",
    "felt a surge of", "a surge of adrenaline", "a jolt of",
    "the game is afoot", "the plot thickens", "against all odds",
    "only the beginning", "was just the beginning",
)


class Hit(NamedTuple):
    """One phrase found: the phrase as listed, where it starts (an index into `keys`) and
    the words it matched, lower-cased, "n't" spelt "not"."""

    phrase: str
    start: int
    text: str


# Irregular forms -> their base, so that a phrase in any tense matches.
_IRREGULAR: dict[str, str] = {form: base for base, forms in {
    "be": "am is are was were been being", "have": "has had having", "do": "does did done",
    "send": "sent", "shake": "shook shaken", "feel": "felt", "know": "knew known",
    "hold": "held", "catch": "caught", "take": "took taken", "run": "ran", "stand": "stood",
    "hang": "hung", "make": "made", "find": "found", "give": "gave given", "go": "went gone",
    "come": "came", "see": "saw seen", "say": "said", "tell": "told", "think": "thought",
    "bring": "brought", "lie": "lay lain", "draw": "drew drawn", "grow": "grew grown",
    "break": "broke broken", "speak": "spoke spoken", "rise": "rose risen", "fall": "fell fallen",
    "steal": "stole stolen", "strike": "struck", "hit": "hit", "cast": "cast",
    "seek": "sought", "keep": "kept", "leave": "left", "lose": "lost", "meet": "met",
    "sit": "sat", "begin": "began begun", "swell": "swelled swollen", "shine": "shone",
    "can": "could", "will": "would", "shall": "should", "get": "got gotten",
    "wake": "woke woken", "write": "wrote written", "tear": "tore torn", "sink": "sank sunk",
    "ring": "rang rung", "swim": "swam swum", "drink": "drank drunk", "fly": "flew flown",
    "throw": "threw thrown", "wear": "wore worn", "hear": "heard", "stride": "strode",
    "slide": "slid", "light": "lit", "dig": "dug", "stick": "stuck", "swing": "swung",
    "win": "won", "weave": "wove woven", "freeze": "froze frozen", "choose": "chose chosen",
}.items() for form in forms.split()}
_CONTRACTION = re.compile(r"\b(ca|wo|sha|\w+?)n't\b")
_MODAL = {"ca": "can", "wo": "will", "sha": "shall"}          # can't, won't, shan't
_VOWELS = set("aeiouy")
_SUFFIXES = ((("ies", "y"), ("es", ""), ("s", "")), (("ied", "y"), ("ing", ""), ("ed", "")))


@functools.lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The key a word's inflections share (crude, but the same for a phrase and a text):
    "shivers", "shivered" and "shivering" -> "shiver"; "sent" -> "send"; "truths" ->
    "truth".

    >>> [stem(w) for w in ("Sent", "sending", "shook", "shaking", "testaments")]
    ['send', 'send', 'shak', 'shak', 'testament']
    """
    word = _IRREGULAR.get(word.lower(), word.lower())
    if len(word) <= 3:
        return word
    for suffixes in _SUFFIXES:         # a plural or third person's "s", then "ing" or "ed"
        for suffix, repl in suffixes:
            if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
                word = word[:-len(suffix)] + repl
                break
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in _VOWELS and word[-1] not in "ls":
        word = word[:-1]               # "running" -> "runn" -> "run"
    return word


def _expand(text: str) -> str:
    """Curly apostrophes straight, "n't" as " not" ("couldn't" -> "could not")."""
    text = text.replace("’", "'").lower()
    return _CONTRACTION.sub(lambda m: f"{_MODAL.get(m.group(1), m.group(1))} not", text)


def keys(text: str) -> list[str]:
    """The stems of `text`'s words, in order, as phrases are matched against them."""
    return [stem(w) for w in WORD.findall(_expand(text))]


@dataclass(frozen=True)
class PhraseList:
    """Phrases ready to match: each phrase's stems, filed by its first two words (or its
    first alone, when it is one word or a `*` comes second)."""

    phrases: tuple[str, ...]
    _filed: dict[tuple[str, ...], list[tuple[tuple[str, ...], str]]] = field(
        default_factory=dict, repr=False, compare=False)

    @classmethod
    def of(cls, phrases: Iterable[str]) -> PhraseList:
        """A list of `phrases` (blank ones and repeats dropped, order kept)."""
        kept = tuple(dict.fromkeys(" ".join(p.split()) for p in phrases if p and p.strip()))
        made = cls(kept)
        for phrase in kept:
            ks = tuple(k for _, k in _phrase_keys(phrase))
            if ks and ks[0] != WILDCARD:
                head = ks[:2] if len(ks) > 1 and ks[1] != WILDCARD else ks[:1]
                made._filed.setdefault(head, []).append((ks, phrase))
        for found in made._filed.values():
            found.sort(key=lambda kp: -len(kp[0]))
        return made

    def __len__(self) -> int:
        return len(self.phrases)

    def match_at(self, ks: Sequence[str], i: int) -> tuple[str, int] | None:
        """The longest phrase that starts at word `i` of `ks` (stems): (phrase, length)."""
        best: tuple[str, int] | None = None
        for head in (tuple(ks[i:i + 2]), (ks[i],)):
            for phrase_keys, phrase in self._filed.get(head, ()):
                n = len(phrase_keys)
                if (best is None or n > best[1]) and i + n <= len(ks) and all(
                        p == WILDCARD or p == k for p, k in zip(phrase_keys, ks[i:i + n])):
                    best = (phrase, n)
                    break
        return best


def _phrase_keys(phrase: str) -> list[tuple[str, str]]:
    tokens = re.findall(rf"{WORD.pattern}|\{WILDCARD}", _expand(phrase))
    return [(t, WILDCARD if t == WILDCARD else stem(t)) for t in tokens]


@functools.lru_cache(maxsize=1)
def builtin() -> PhraseList:
    """The built-in list (`SLOP`), made once."""
    return PhraseList.of(SLOP)


def phrase_list(extra: Iterable[str] = (), *, with_builtin: bool = True) -> PhraseList:
    """The built-in list plus `extra` (a project's `style.avoid`), or `extra` alone."""
    extra = list(extra)
    if with_builtin and not extra:
        return builtin()
    return PhraseList.of([*(SLOP if with_builtin else ()), *extra])


def slop_hits(text: str, phrases: PhraseList | None = None) -> list[Hit]:
    """The listed phrases in `text` (the built-in list when `phrases` is None), in order;
    where two overlap, the longer counts, once.

    >>> [h.phrase for h in slop_hits("It sent shivers down my spine, a testament to fear.")]
    ['sent shivers down', 'a testament to']
    """
    phrases = builtin() if phrases is None else phrases
    written = WORD.findall(_expand(text))
    ks = [stem(w) for w in written]
    hits, i = [], 0
    while i < len(ks):
        found = phrases.match_at(ks, i)
        if found is None:
            i += 1
            continue
        phrase, n = found
        hits.append(Hit(phrase, i, " ".join(written[i:i + n])))
        i += n
    return hits


def slop_counts(texts: Iterable[str], phrases: PhraseList | None = None) -> Counter[str]:
    """How often each listed phrase occurs over `texts` (the overused ones first when
    read with `most_common`)."""
    return Counter(hit.phrase for text in texts for hit in slop_hits(text, phrases))


def per_thousand(count: float, words: int) -> float:
    """`count` per 1,000 of `words` (0.0 for no words), to two places."""
    return round(count * 1000 / words, 2) if words else 0.0
