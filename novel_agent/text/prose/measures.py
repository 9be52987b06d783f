"""The countable shape of prose: lexical diversity, sentence and paragraph lengths,
punctuation habits.

`mtld` is the Measure of Textual Lexical Diversity (McCarthy and Jarvis, 2010): the mean
length of the stretches of text over which the type-token ratio stays above 0.72, read
forwards and backwards and averaged; it hardly depends on the text's length (a text of
one word said over and over scores 2, varied prose 70 to 120). `mattr` is the moving-
average type-token ratio over a window of 50 words. `spread` gives the mean and the
standard deviation of a list of lengths; `punctuation` the rate per 1,000 words of each
mark a writer leans on. Pure.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from statistics import fmean, pstdev
from typing import NamedTuple

MTLD_THRESHOLD = 0.72
MATTR_WINDOW = 50

# Each mark counted by `punctuation`: its name and the pattern that finds it.
MARKS: dict[str, re.Pattern[str]] = {
    "comma": re.compile(r","),
    "semicolon": re.compile(r";"),
    "colon": re.compile(r":"),
    "dash": re.compile(r"—|–|(?<!-)--(?!-)|(?<=\s)-(?=\s)"),
    "ellipsis": re.compile(r"…|\.\s?\.\s?\."),
    "exclamation": re.compile(r"!"),
    "question": re.compile(r"\?"),
}


class Spread(NamedTuple):
    """The mean and the (population) standard deviation of some lengths."""

    mean: float
    sd: float


def spread(lengths: Sequence[float]) -> Spread:
    """The mean and standard deviation of `lengths`, to two places (0, 0 for none).

    >>> spread([4, 8, 6])
    Spread(mean=6.0, sd=1.63)
    """
    if not lengths:
        return Spread(0.0, 0.0)
    return Spread(round(fmean(lengths), 2), round(pstdev(lengths), 2))


def _factors(tokens: Sequence[str], threshold: float) -> float:
    factors, types, count = 0.0, set(), 0
    for token in tokens:
        types.add(token)
        count += 1
        if len(types) / count <= threshold:
            factors += 1
            types, count = set(), 0
    if count:
        factors += (1 - len(types) / count) / (1 - threshold)
    return factors


def mtld(words: Sequence[str], threshold: float = MTLD_THRESHOLD) -> float:
    """The MTLD of `words` (case ignored), to two places: the number of words over the
    number of factors, forwards and backwards averaged. A text whose ratio never falls
    to the threshold has no factor: its MTLD is its length. 0.0 for no words.

    >>> mtld(["echo"] * 100)
    2.0
    """
    tokens = [w.lower() for w in words]
    if not tokens:
        return 0.0
    scores = []
    for seq in (tokens, tokens[::-1]):
        f = _factors(seq, threshold)
        scores.append(len(seq) / f if f else float(len(seq)))
    return round(fmean(scores), 2)


def mattr(words: Sequence[str], window: int = MATTR_WINDOW) -> float:
    """The moving-average type-token ratio of `words` over `window` words (case
    ignored), to four places; a text shorter than the window gets its plain ratio.

    >>> mattr(["a", "b"] * 50, window=50)
    0.04
    """
    tokens = [w.lower() for w in words]
    if not tokens:
        return 0.0
    if len(tokens) <= window:
        return round(len(set(tokens)) / len(tokens), 4)
    counts = Counter(tokens[:window])
    total = len(counts)
    for i in range(window, len(tokens)):
        old, new = tokens[i - window], tokens[i]
        counts[old] -= 1
        if not counts[old]:
            del counts[old]
        counts[new] += 1
        total += len(counts)
    return round(total / (len(tokens) - window + 1) / window, 4)


def punctuation(text: str, words: int) -> dict[str, float]:
    """Each of MARKS' rates per 1,000 `words` in `text`, to two places (an ellipsis of
    three dots is one ellipsis, not three full stops or anything else)."""
    out = {}
    for name, pattern in MARKS.items():
        n = len(pattern.findall(text))
        out[name] = round(n * 1000 / words, 2) if words else 0.0
    return out
