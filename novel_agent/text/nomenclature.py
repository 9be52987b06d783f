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
book's pool of names gives never makes a finding. Pure: no I/O, no memory (the
names are filed by their letter pairs in a cache, so that a new name is measured
against the few known ones alike, not all: see Known).
"""

from __future__ import annotations

import functools
import itertools
from collections import Counter
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


# Every name a Known has been asked about, filed by its word count and each of its letter
# pairs, so that near_known measures only the names sharing enough pairs with a new one
# (at hundreds of characters, a handful rather than the hundreds of its length). A cache
# across books and ticks (a name's pairs never change), emptied when it grows past FILED_MOST
# names: each Known notes the filing it used (_filing) and files its names again after.
FILED_MOST = 1 << 16
_filed: set[str] = set()
_by_pair: dict[tuple[int, str], list[str]] = {}
_filing = 0


def _file(normals: Iterable[str]) -> None:
    global _filing
    for normal in normals:
        if normal in _filed:
            continue
        if len(_filed) >= FILED_MOST:
            _filed.clear()
            _by_pair.clear()
            _filing += 1
        _filed.add(normal)
        words = len(normal.split())
        for pair in _grams(normal):
            _by_pair.setdefault((words, pair), []).append(normal)


class Known(list):
    """Names as near_known compares them: (normalized name, its word count, the name), in
    order, with where each normalized name stands (worked out when first asked, and kept
    by `plus`)."""

    def __init__(self, names: Iterable[tuple[str, int, str]] = ()):
        super().__init__(names)
        self._at: dict[str, tuple[int, ...]] | None = None
        self._filing = -1

    def _where(self) -> dict[str, tuple[int, ...]]:
        """Each normalized name -> its places in the list (its names filed by pair)."""
        if self._at is None:
            at: dict[str, tuple[int, ...]] = {}
            for n, (normal, _, _) in enumerate(self):
                at[normal] = (*at.get(normal, ()), n)
            self._at = at
        if self._filing != _filing:
            _file(self._at)
            self._filing = _filing
        return self._at

    def plus(self, *names: tuple[str, int, str]) -> Known:
        """These names with `names` after them (what this one worked out kept: a tick adds
        a name or two to hundreds)."""
        known = Known([*self, *names])
        if self._at is not None:
            at = dict(self._at)
            for n, (normal, _, _) in enumerate(names, len(self)):
                at[normal] = (*at.get(normal, ()), n)
            known._at, known._filing = at, self._filing
            if self._filing == _filing:
                _file(normal for normal, _, _ in names)
        return known

    def holds(self, normal: str) -> bool:
        """Whether `normal` (a normalized name) is one of these."""
        return normal in self._where()

    def like(self, normal: str, need: int) -> list[tuple[str, int, str]]:
        """Those of `normal`'s word count, within two letters of its length, that hold at
        least `need` of its letter pairs (a pair it has twice counts twice), in order."""
        at, words = self._where(), len(normal.split())
        if need <= 0:         # a name of a letter or three: its length alone tells
            return [k for k in self if k[1] == words and abs(len(k[0]) - len(normal)) <= 2]
        shared = Counter(itertools.chain.from_iterable(
            _by_pair.get((words, pair), ()) for pair in _pairs(normal)))
        found = sorted(n for other, count in shared.items()
                       if count >= need and abs(len(other) - len(normal)) <= 2
                       for n in at.get(other, ()))
        return [self[n] for n in found]


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
    """near_name, of names already made known_names (only those of its word count, near
    its length and sharing enough letter pairs with it are measured: an exact match is
    among them)."""
    n = normalize_name(name)
    words = len(n.split())
    grams = _pairs(n)
    best, found = 3, ""
    for kn, count, k in known.like(n, len(grams) - 2 * allowed(n, n)):
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


def _pairs(normal: str) -> list[str]:
    """A name's pairs of letters side by side, in order, each as often as it has it."""
    return [normal[i:i + 2] for i in range(len(normal) - 1)]


@functools.lru_cache(maxsize=1 << 15)
def _grams(normal: str) -> frozenset[str]:
    """A name's pairs of letters side by side: a name within d edits of another keeps all
    but at most 2d of its own among them (near_known's cheap test before the distance)."""
    return frozenset(_pairs(normal))


@functools.lru_cache(maxsize=1 << 15)
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

    people: Known = field(default_factory=Known)
    places: Known = field(default_factory=Known)
    firsts: dict[str, str] = field(default_factory=dict)   # first name -> the first full name
    full: frozenset[str] = frozenset()                     # people's names, normalized
    # `firsts` as near_known compares them: (first name, 1, its owner), in order
    first_names: Known = field(default_factory=Known, compare=False, repr=False)
    # what free answered of this book: (name, kind) -> its answer (a tick asks the pool's
    # names of one book when it refills the pool, offers it and renames from it)
    asked: dict[tuple[str, str], bool] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        if len(self.first_names) != len(self.firsts):
            object.__setattr__(self, "first_names", Known(
                (first, 1, owner) for first, owner in self.firsts.items()))

    @functools.cached_property
    def words(self) -> frozenset[str]:
        """Every word of the people's names (aliases and short forms too), normalized."""
        return frozenset(w for normal, _, _ in self.people for w in normal.split())

    @functools.cached_property
    def surnames(self) -> frozenset[str]:
        """The words after the first of the people's names, normalized."""
        return frozenset(w for normal, count, _ in self.people if count > 1
                         for w in normal.split()[1:])

    def holds(self, name: str, kind: str = "people") -> bool:
        """Whether `name` is one of the names of `kind` the book holds (case aside)."""
        return (self.people if kind == "people" else self.places).holds(normalize_name(name))

    def add(self, name: str, kind: str) -> NameBook:
        """The book with `name` known too (a newcomer given this tick)."""
        if kind == "places":
            return NameBook(self.people, self.places.plus(_known(name)), self.firsts,
                            self.full, self.first_names)
        first, firsts, first_names = first_name(name), self.firsts, self.first_names
        if first and first not in firsts:
            firsts, first_names = {**firsts, first: name}, first_names.plus((first, 1, name))
        short = [_known(name.split()[0])] if len(name.split()) > 1 else []
        return NameBook(self.people.plus(_known(name), *short), self.places, firsts,
                        self.full | {normalize_name(name)}, first_names)


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
                    frozenset(_known(name)[0] for name in people))


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
    if (name, kind) not in known.asked:
        alone = kind == "people" and len(normalize_name(name).split()) == 1
        known.asked[name, kind] = not known.holds(name, kind) and not (
            alone and first_name(name) in known.firsts) and name_clash(name, known, kind) is None
    return known.asked[name, kind]


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
    if not first:
        return None
    grams = _pairs(first)
    for other, _, owner in known.first_names.like(first, len(grams) - 2 * allowed(first, first)):
        limit = allowed(first, other)
        if limit and abs(len(other) - len(first)) <= limit \
                and sum(g not in _grams(other) for g in grams) <= 2 * limit \
                and distance_within(first, other, limit) is not None:
            return Clash(owner, "near first name")
    return None
