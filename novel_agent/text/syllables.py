"""Made-up names from syllables: the book's pool of names when no model makes one.

`syllable_names(seed, count, kind, known)` gives `count` first names, surnames or
place names, the same for the same seed, each a few open syllables (a consonant or
two, then a vowel) with a closing consonant ("Tavel", "Morrin", "Selbrook"): never
three consonants together, so each can be said aloud. None is one a reader would
take for a name `known` holds (nomenclature.name_clash), nor for one made before
it. Pure: no I/O.
"""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Iterator

from novel_agent.text.names import name_problem, not_a_name
from novel_agent.text.nomenclature import NameBook, free, known_names

ONSETS = ("b", "d", "f", "g", "h", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z",
          "br", "dr", "gr", "kr", "tr", "th", "sh", "st", "fl", "bl", "cl", "sk")
INNER = ("b", "d", "l", "m", "n", "r", "s", "t", "v", "k", "th", "ll", "rr", "nn")
VOWELS = ("a", "e", "i", "o", "u", "a", "e", "o", "a", "i")
PAIRS = ("ai", "ea", "ie", "ou")      # a vowel pair, now and then, in a last syllable
CODAS = ("n", "r", "l", "s", "th", "m", "k", "n", "r", "nd", "rn", "ld", "st", "x")
PLACE_ENDS = ("mere", "ford", "holm", "by", "stead", "wick", "haven", "gate", "moor",
              "fell", "brook", "hollow", "reach", "ton", "dale", "combe")
KINDS = ("first", "surname", "place")
TRIES = 60            # draws a name may take, at most, per name asked for
_CLUSTER = re.compile(r"th|sh|ch|ck|ll|rr|nn|ss")


def syllable_names(seed: str | int, count: int, kind: str,
                   known: NameBook | None = None) -> list[str]:
    """`count` made-up names of `kind` ("first", "surname", "place"), the same for the
    same `seed`; none clashes with a name `known` holds or with one made before it
    (fewer than `count` only when TRIES draws a name find none).

    >>> syllable_names(7, 3, "first") == syllable_names(7, 3, "first")
    True
    """
    return list(itertools.islice(made_names(seed, kind, known, count * TRIES), count))


def made_names(seed: str | int, kind: str, known: NameBook | None = None,
               draws: int = 10 * TRIES) -> Iterator[str]:
    """syllable_names' names one at a time, as many as `draws` draws find: a caller that
    takes the first free one pays for it alone (each name is held against every known
    name of its length: at hundreds of characters, a few milliseconds a name)."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, not {kind!r}")
    rng = random.Random(f"{seed}|{kind}")
    book = known or NameBook()
    if kind == "surname":      # held against surnames alone, as places are against places
        book = NameBook(places=known_names(_surnames(book)))
    as_kind = "people" if kind == "first" else "places"
    ends = list(PLACE_ENDS)
    rng.shuffle(ends)
    made = 0
    for _ in range(draws):
        name = _name(rng, kind, ends[made % len(ends)])    # places: endings in turn
        if name_problem(name) or not_a_name(name) or not free(name, book, as_kind):
            continue
        made += 1
        yield name
        book = book.add(name, as_kind)


def _surnames(book: NameBook) -> list[str]:
    """The last words of the people's names `book` holds (their surnames)."""
    return [name.split()[-1] for _, words, name in book.people if words > 1]


def _name(rng: random.Random, kind: str, end: str) -> str:
    if kind == "first":
        count = rng.choice((2, 2, 2, 3))
        word = _syllables(rng, count, close=count == 2 and rng.random() < 0.5)
    elif kind == "surname":
        word = _syllables(rng, 2, close=True)
    else:
        word = _syllables(rng, rng.choice((1, 2)), close=False) + end
    return word.capitalize() if pronounceable(word) else ""


def _syllables(rng: random.Random, count: int, *, close: bool) -> str:
    """`count` syllables, a consonant (or two) before each vowel but maybe the first,
    and a closing consonant when `close`."""
    parts = [rng.choice(ONSETS) if rng.random() < 0.85 else ""]
    for n in range(count):
        last = n == count - 1
        parts.append(rng.choice(PAIRS) if last and rng.random() < 0.15 else rng.choice(VOWELS))
        if not last:
            parts.append(rng.choice(INNER))
    if close:
        parts.append(rng.choice(CODAS))
    return "".join(parts)


def pronounceable(word: str) -> bool:
    """Whether `word` can be said: letters only, a vowel in it, never three consonants
    together ("th", "sh", "ck" and doubled letters count as one), never three vowels.

    >>> pronounceable("Morrin"), pronounceable("Strkla")
    (True, False)
    """
    low = word.lower()
    if not low.isalpha() or not re.search(r"[aeiouy]", low):
        return False
    single = _CLUSTER.sub("c", low)
    return not re.search(r"[^aeiouy]{3}|[aeiouy]{3}", single)
