"""Repeated word sequences: the 3- to 5-grams a text says more than once, or takes again
from the texts before it.

An n-gram is n consecutive words of one sentence, lower-cased (no n-gram runs across a
sentence's end); one made of function words alone ("and then he", "it was a") is
left out, since every writer repeats those. `ngrams(text)` counts a text's;
`repeats(counts)` is how many of its occurrences repeat one before it in the same text
(an n-gram said three times makes two); `repeats_across(counts, earlier)` how many of its
occurrences were said in any of the earlier texts (the last K scenes). Pure.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from novel_agent.text.prose.functionwords import is_function_word
from novel_agent.text.prose.split import sentences, words

SIZES = (3, 4, 5)
Gram = tuple[str, ...]


def ngrams(text: str, sizes: Iterable[int] = SIZES) -> Counter[Gram]:
    """Every n-gram of `text` for n in `sizes`, with how often it occurs.

    >>> ngrams("The old man walked. The old man ran.", (3,))[("the", "old", "man")]
    2
    """
    return sentence_ngrams(sentences(text), sizes)


def sentence_ngrams(said: Iterable[str], sizes: Iterable[int] = SIZES) -> Counter[Gram]:
    """`ngrams` of a text already cut into its sentences."""
    sizes = tuple(sizes)
    counts: Counter[Gram] = Counter()
    for sentence in said:
        ws = [w.lower() for w in words(sentence)]
        for n in sizes:
            for i in range(len(ws) - n + 1):
                gram = tuple(ws[i:i + n])
                if not all(is_function_word(w) for w in gram):
                    counts[gram] += 1
    return counts


def repeats(counts: Mapping[Gram, int]) -> int:
    """How many occurrences repeat an n-gram said before in the same text (the sum of
    count - 1), all sizes together."""
    return sum(c - 1 for c in counts.values() if c > 1)


def repeats_by_size(counts: Mapping[Gram, int]) -> dict[int, int]:
    """`repeats`, per n."""
    out: dict[int, int] = {}
    for gram, c in counts.items():
        if c > 1:
            out[len(gram)] = out.get(len(gram), 0) + c - 1
    return out


def repeats_across(counts: Mapping[Gram, int], earlier: Iterable[Mapping[Gram, Any]]) -> int:
    """How many of the occurrences in `counts` are of an n-gram found in any of the
    `earlier` texts' counts (or sets of n-grams)."""
    seen: set[Gram] = set()
    for before in earlier:
        seen.update(before)
    return sum(c for gram, c in counts.items() if gram in seen)


def most_repeated(counts: Mapping[Gram, int], top: int = 10) -> list[tuple[str, int]]:
    """The n-grams said most often (twice or more), longest first among equals, as text."""
    grams = sorted(((c, len(g), " ".join(g)) for g, c in counts.items() if c > 1),
                   key=lambda t: (-t[0], -t[1], t[2]))
    return [(text, c) for c, _, text in grams[:top]]
