"""Names a reader would confuse: the one rule the naming guard and the audit share.

`name_clash(name, known)` says why a new character's or place's name would be
taken for a known one (None when it would not): it is one or two letters from a
known name of its kind ("Tobin Keell" for Tobin Keel, "the bel tower"), or, for a
person, repeats the first name of another ("Mara Fenn" while Mara Quill lives),
or its first name is a letter or two from another's ("Mara Vane" beside Mary
Quill). How many letters count grows with the names: names under three letters
only by repeating one, up to seven letters one letter, longer ones two. The tick
gives no new name the rule would flag (tick/stages/newcomers.py) and the audit's
nomenclature rule reports what it flags in a scene (audit/rules.py): a name the
book's pool of names gives never makes a finding. Pure: no I/O, no memory.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass, field

from novel_agent.text.names import PARTICLES, normalize_name, not_a_name

# Words that open a person's name without being a first name: "Captain Harrow" and
# "Captain Vell" share no first name. (Titles alone, "Mr", "Dr", are names.not_a_name's.)
FORMS = frozenset("""captain capt father mother sister brother uncle aunt old young little
big saint st king queen prince princess professor prof doctor inspector sergeant sgt
constable lieutenant lt colonel col general gen reverend rev master mistress widow granny
grandma grandpa lord lady sir dame abbot abbess brother friar""".split())


def allowed(a: str, b: str) -> int:
    """How many letters apart two names (normalized) may be and still be taken for each
    other: by the shorter, 0 under three letters ("Al", "Ed": only the same), 1 up to
    seven ("Tom" and "Tim", "Mara" and "Mary"), 2 from eight ("Tobin Keel" and "Tobin
    Kell")."""
    short = min(len(a), len(b))
    return 0 if short < 3 else 1 if short < 8 else 2


def distance(a: str, b: str) -> int:
    """Levenshtein distance."""
    if len(a) < len(b):
        a, b = b, a
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (ca != cb))
    return row[-1]


def distance_within(a: str, b: str, k: int) -> int | None:
    """The Levenshtein distance of `a` and `b` when it is at most `k`, else None: only
    the cells within `k` of the diagonal are worked out, and it stops at the first row
    whose cells are all over `k` (two unlike names: after a letter or two)."""
    if abs(len(a) - len(b)) > k:
        return None
    over = k + 1              # what a cell off the band stands at (it is more than k)
    prev = [j if j <= k else over for j in range(len(b) + 1)]
    for i, ca in enumerate(a, 1):
        cur = [i if i <= k else over] + [over] * len(b)
        for j in range(max(1, i - k), min(len(b), i + k) + 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != b[j - 1]))
        if min(cur) > k:
            return None
        prev = cur
    return prev[-1] if prev[-1] <= k else None


class Known(list):
    """Names as near_known compares them: (normalized name, its word count, the name), in
    order, and where each is by its word count and length (a name is compared only with
    those of its word count and within two letters of its length: at hundreds of
    characters, a few dozen)."""

    def __init__(self, names: Iterable[tuple[str, int, str]]):
        super().__init__(names)
        self.at: dict[tuple[int, int], list[int]] = {}
        for n, (normal, count, _) in enumerate(self):
            self.at.setdefault((count, len(normal)), []).append(n)

    def near(self, words: int, length: int) -> list[tuple[str, int, str]]:
        """Those of `words` words and a length within 2 of `length`, in order."""
        found = [n for size in range(length - 2, length + 3)
                 for n in self.at.get((words, size), ())]
        return [self[n] for n in sorted(found)]


def known_names(names: Iterable[str]) -> Known:
    """Names as near_known compares them, each normalized once (for many names asked)."""
    return Known(map(_known, names))


@functools.lru_cache(maxsize=1 << 15)
def _known(name: str) -> tuple[str, int, str]:
    """(normalized, its word count, the name), kept for the names last asked (every tick
    that names someone new asks it of every known name)."""
    normal = normalize_name(name)
    return normal, len(normal.split()), name


def near_name(name: str, known: Iterable[str]) -> str:
    """The known name `name` is a misspelling of (one or two letters off, words alike in
    number: see `allowed`), or "" when it is none's or is one of them."""
    return near_known(name, known_names(known))


def near_known(name: str, known: Known) -> str:
    """near_name, of names already made known_names (only those near in word count and
    length are compared: an exact match is among them)."""
    n = normalize_name(name)
    words = len(n.split())
    grams = [n[i:i + 2] for i in range(len(n) - 1)]
    best, found = 3, ""
    for kn, count, k in known.near(words, len(n)):
        if kn == n:
            return ""
        limit = allowed(n, kn)
        if not limit or abs(len(kn) - len(n)) > limit or count != words:
            continue          # the distance is at least the difference in length
        if sum(g not in _grams(kn) for g in grams) > 2 * limit:
            continue          # an edit undoes at most two of n's letter pairs: too unlike
        d = distance_within(n, kn, limit)
        if d is not None and d < best:
            best, found = d, k
    return found


@functools.lru_cache(maxsize=1 << 15)
def _grams(normal: str) -> frozenset[str]:
    """A name's pairs of letters side by side: a name within d edits of another keeps all
    but at most 2d of its own among them (near_known's cheap test before the distance)."""
    return frozenset(normal[i:i + 2] for i in range(len(normal) - 1))


def first_name(name: str) -> str:
    """The first name of a person's name, normalized: its first word that is no title,
    rank or kinship ("Dr. Aris Thorne", "Captain Aris Thorne": "aris"); "" when it has
    no other (the name "Captain" alone), is an epithet ("The Drowned Stranger") or a
    surname alone ("van Dyke")."""
    if name.strip().lower().startswith("the "):
        return ""
    words = normalize_name(name).split()
    if words and words[0] in PARTICLES and name.split()[0].islower():
        return ""             # "van Dyke": a surname alone
    for n, word in enumerate(words):
        bare = word.strip(".,")
        if n < len(words) - 1 and (bare in FORMS or not_a_name(bare) == "a title alone"):
            continue
        return bare
    return ""


@dataclass(frozen=True)
class NameBook:
    """The known names a new one is held against: people's (names and aliases, and the
    first names each full name holds) and places'."""

    people: Known = field(default_factory=lambda: Known([]))
    places: Known = field(default_factory=lambda: Known([]))
    firsts: dict[str, str] = field(default_factory=dict)   # first name -> the first full name
    full: frozenset[str] = frozenset()                     # people's names, normalized

    def holds(self, name: str, kind: str = "people") -> bool:
        """Whether `name` is one of the names of `kind` the book holds (case aside)."""
        normal = normalize_name(name)
        names = self.people if kind == "people" else self.places
        return any(known == normal for known, _, _ in names.near(len(normal.split()),
                                                                  len(normal)))

    @functools.cached_property
    def _firsts_by_length(self) -> dict[int, list[tuple[int, str, str]]]:
        at: dict[int, list[tuple[int, str, str]]] = {}
        for n, (first, owner) in enumerate(self.firsts.items()):
            at.setdefault(len(first), []).append((n, first, owner))
        return at

    def firsts_near(self, first: str) -> list[tuple[int, str, str]]:
        """The first names within two letters of `first`'s length (no other can be one or
        two letters from it), as (their order in `firsts`, the first name, its owner): at
        hundreds of characters, a few dozen of them rather than all."""
        if not first:
            return []
        return [f for size in range(len(first) - 2, len(first) + 3)
                for f in self._firsts_by_length.get(size, ())]

    def add(self, name: str, kind: str) -> NameBook:
        """The book with `name` known too (a newcomer given this tick)."""
        if kind == "places":
            return NameBook(self.people, Known([*self.places, _known(name)]), self.firsts,
                            self.full)
        first = first_name(name)
        firsts = self.firsts if not first or first in self.firsts else \
            {**self.firsts, first: name}
        short = [_known(name.split()[0])] if len(name.split()) > 1 else []
        return NameBook(Known([*self.people, _known(name), *short]), self.places, firsts,
                        self.full | {normalize_name(name)})


def name_book(people: Iterable[str], places: Iterable[str],
              aliases: Iterable[str] = ()) -> NameBook:
    """The NameBook of these people's names (and their `aliases`, held against but no
    first names of their own) and places' names."""
    people = [p for p in people if p]
    firsts: dict[str, str] = {}
    for name in people:
        first = first_name(name)
        if first:
            firsts.setdefault(first, name)
    shorts = [name.split()[0] for name in people if len(name.split()) > 1]
    return NameBook(known_names([*people, *(a for a in aliases if a), *shorts]),
                    known_names(p for p in places if p), firsts,
                    frozenset(map(normalize_name, people)))


@dataclass(frozen=True)
class Clash:
    """Why a new name would be taken for a known one: the known name, and how."""

    known: str
    how: str            # "variant" | "first name" | "near first name"

    def says(self, name: str) -> str:
        """What is wrong with `name`, in words."""
        if self.how == "first name":
            return f"'{name}' repeats the first name of '{self.known}'"
        if self.how == "near first name":
            return f"'{name}' has a first name a letter or two from '{self.known}'"
        return f"'{name}' is a variant of '{self.known}'"


def free(name: str, known: NameBook, kind: str = "people") -> bool:
    """Whether a newcomer may take `name`: `known` holds no such name (nor, for a person,
    such a first name), nor one a reader would take it for (name_clash)."""
    alone = kind == "people" and len(normalize_name(name).split()) == 1
    if known.holds(name, kind) or (alone and first_name(name) in known.firsts):
        return False
    return name_clash(name, known, kind) is None


def name_clash(name: str, known: NameBook, kind: str = "people") -> Clash | None:
    """Why `name`, a new character's (`kind` "people") or place's ("places"), would be
    taken for one `known` holds; None when it would not, or when it is one of them (a
    name, or a first name alone).

    >>> book = name_book(["Mara Quill", "Tobin Keel"], ["the bell tower"])
    >>> name_clash("Mara Fenn", book).says("Mara Fenn")
    "'Mara Fenn' repeats the first name of 'Mara Quill'"
    >>> name_clash("the bel tower", book, "places").known
    'the bell tower'
    >>> name_clash("Ilse Varga", book) is None
    True
    """
    if kind == "places":
        near = near_known(name, known.places)
        return Clash(near, "variant") if near else None
    normal = normalize_name(name)
    near = near_known(name, known.people)
    if near:
        return Clash(near, "variant")
    first = first_name(name)
    if normal in known.full or not normal or (len(normal.split()) == 1 and first in known.firsts):
        return None           # a known name, or someone's first name alone: who is meant
                              # is memory's to say (the tick renames a newcomer so named)

    if first and first in known.firsts:
        return Clash(known.firsts[first], "first name")
    grams = [first[i:i + 2] for i in range(len(first) - 1)]
    close = [(n, owner) for n, other, owner in known.firsts_near(first)
             if (limit := allowed(first, other))
             and sum(g not in _grams(other) for g in grams) <= 2 * limit
             and distance_within(first, other, limit) is not None]
    return Clash(min(close)[1], "near first name") if close else None
