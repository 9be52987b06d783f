"""The book's pool of names: `names.yaml`, first names, surnames and places for newcomers.

Made once for the book's setting (tick/stages/names.py: by the planner's model,
else by the syllable generator), then plain YAML the author may edit:

    first_names: [Edda, Tomas, ...]
    surnames: [Lorn, Varga, ...]
    places: [Skerry Light, the Salt Steps, ...]
    made_by: the planner's model (gpt-4o-mini)

`read_pool` checks it on load (an error names the file and the line);
`pick_person` and `pick_place` give the first of its names (then made-up ones)
that no known name makes confusable (nomenclature.free); `offer` lists the
unused ones for the planner's prompt; `refilled` makes a list whose names are
all taken anew (a long book keeps real first names to offer). Pure but for
`read_pool`.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from novel_agent.errors import FileFormatError, ModelResponseError
from novel_agent.files import dump_yaml, read_yaml, yaml_line
from novel_agent.text.names import name_problem, normalize_name, not_a_name
from novel_agent.text.nomenclature import NameBook, free
from novel_agent.text.syllables import TRIES, made_names, syllable_names
from novel_agent.yaml_comments import keep_comments

POOL_FILE = "names.yaml"
LISTS = ("first_names", "surnames", "places")
SIZES = {"first_names": 24, "surnames": 16, "places": 12}    # what the model is asked for
LEAST = {"first_names": 6, "surnames": 4, "places": 3}       # fewer: the answer is not used
NAME_CHARS = {"first_names": 20, "surnames": 24, "places": 40}
_ONE_WORD = re.compile(r"^[^\W\d_]+(?:['’-][^\W\d_]+)*$")
HEADER = ("# The book's pool of names: each new character takes a first name (and a surname)\n"
          "# from here, each new place a place name, unless it would be taken for a known\n"
          "# one. Made once for the book's setting; edit it as you like (one word per first\n"
          "# name and surname). Delete the file and the next new name makes another. A list\n"
          "# whose names are all taken is made up anew.\n")


@dataclass(frozen=True)
class NamePool:
    """The names newcomers take, in the order they are taken."""

    first_names: tuple[str, ...] = ()
    surnames: tuple[str, ...] = ()
    places: tuple[str, ...] = ()
    made_by: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"first_names": list(self.first_names), "surnames": list(self.surnames),
                "places": list(self.places), "made_by": self.made_by}


def pool_text(pool: NamePool, was: str | None = None) -> str:
    """names.yaml's text: a note on what it is, then the lists. Over `was`, the text the
    file holds, the author's comments and key order are kept (yaml_comments)."""
    return keep_comments(was, HEADER + dump_yaml(pool.to_dict()))


def list_problem(key: str, name: str) -> str | None:
    """Why `name` cannot stand in the pool's list `key` (None if it can)."""
    why = name_problem(name)
    if why:
        return why
    if key != "places" and not _ONE_WORD.match(name):
        return "one word is wanted (letters, and a hyphen or an apostrophe within)"
    if not_a_name(name):
        return f"{not_a_name(name)}, not a name"
    return None


def read_pool(path: Path) -> NamePool | None:
    """The pool in `path`, None when there is none. A file that is not a pool (a key
    other than the lists and made_by, a list of something else, an item that is no
    name) is a FileFormatError naming the file and the line."""
    data = read_yaml(path)
    if data is None:
        return None
    if not isinstance(data, Mapping):
        raise FileFormatError("a pool of names is a mapping of first_names, surnames and "
                              "places, each a list", file=str(path), line=1)
    for key in data:
        if key not in (*LISTS, "made_by"):
            raise FileFormatError(f"unknown key {key!r} (the keys: {', '.join(LISTS)}, "
                                  "made_by)", file=str(path), line=yaml_line(path, str(key)))
    lists: dict[str, tuple[str, ...]] = {}
    for key in LISTS:
        items = data.get(key) or []
        if not isinstance(items, list):
            raise FileFormatError(f"{key} must be a list of names", file=str(path),
                                  line=yaml_line(path, key))
        for n, item in enumerate(items):
            why = list_problem(key, item) if isinstance(item, str) else "not a text"
            if why:
                raise FileFormatError(f"{key}: {item!r} is no name ({why})", file=str(path),
                                      line=yaml_line(path, key, n))
        lists[key] = tuple(dict.fromkeys(" ".join(i.split()) for i in items))
    return NamePool(lists["first_names"], lists["surnames"], lists["places"],
                    made_by=str(data.get("made_by") or ""))


# -- the model's answer --------------------------------------------------------------

def pool_schema() -> dict[str, Any]:
    """The JSON schema of the names stage's answer."""
    return {"type": "object", "required": list(LISTS), "properties": {
        key: {"type": "array", "minItems": LEAST[key], "maxItems": SIZES[key],
              "items": {"type": "string", "minLength": 2, "maxLength": NAME_CHARS[key]}}
        for key in LISTS}}


def pool_from_json(data: dict[str, Any]) -> NamePool:
    """The pool a model answered: each list's names kept that can stand in it (see
    list_problem), once, and none a letter or two from one kept before it; fewer than
    LEAST of a list is a ModelResponseError (the answer is asked again, once)."""
    lists, problems = {}, []
    for key in LISTS:
        raw = data.get(key)
        kept = distinct(key, [" ".join(str(n).split()) for n in raw]
                        if isinstance(raw, list) else [])
        if len(kept) < LEAST[key]:
            problems.append(f"'{key}' holds {len(kept)} usable names, {LEAST[key]} at the "
                            "least are wanted" + ("" if key == "places" else
                                                  " (one word each, letters only)"))
        lists[key] = tuple(kept)
    if problems:
        raise ModelResponseError("names: " + "; ".join(problems), stage="names")
    return NamePool(lists["first_names"], lists["surnames"], lists["places"])


def distinct(key: str, names: list[str]) -> list[str]:
    """`names` that can stand in list `key`, none a reader would take for one before it."""
    kind = "people" if key == "first_names" else "places"
    book, kept = NameBook(), list[str]()
    for name in names:
        if not name or list_problem(key, name) or not free(name, book, kind):
            continue
        kept.append(name)
        book = book.add(name, kind)
    return kept


def fallback_pool(seed: str | int, known: NameBook) -> NamePool:
    """A pool of made-up names (text/syllables.py), the same for the same seed, none
    confusable with a name `known` holds."""
    return NamePool(tuple(syllable_names(seed, SIZES["first_names"], "first", known)),
                    tuple(syllable_names(seed, SIZES["surnames"], "surname", known)),
                    tuple(syllable_names(seed, SIZES["places"], "place", known)),
                    made_by="the syllable generator")


def refilled(pool: NamePool, known: NameBook, seed: str | int) -> NamePool | None:
    """`pool` with made-up names (text/syllables.py) in place of a list whose names are
    all taken (no newcomer could take one: see `offer`; a list left empty stays so), as
    many as a pool is made with (SIZES), none confusable with a name `known` holds; None
    when each list has a name left. A long book keeps offering first names, and
    names.yaml stays its size."""
    lists = pool.to_dict()
    batch = f"{seed}|refill|{len(known.people)}|{len(known.places)}"   # another each time
    for key, kind in zip(LISTS, ("first", "surname", "place")):
        if lists[key] and not next(_takeable(pool, key, known), ""):   # (an empty one: yours)
            lists[key] = syllable_names(batch, SIZES[key], kind, known)
    if lists == pool.to_dict():
        return None
    by = pool.made_by if "syllable generator" in pool.made_by else \
        ", then ".join(filter(None, (pool.made_by, "the syllable generator")))
    return NamePool(tuple(lists["first_names"]), tuple(lists["surnames"]),
                    tuple(lists["places"]), made_by=by)


def _takeable(pool: NamePool, key: str, known: NameBook) -> Iterator[str]:
    """The names of list `key` a newcomer may take, in order: first names and places no
    known one makes confusable (`free`), surnames no one known bears."""
    if key == "surnames":
        return (s for s in pool.surnames if normalize_name(s) not in known.words)
    kind = "people" if key == "first_names" else "places"
    return (name for name in getattr(pool, key) if free(name, known, kind))


# -- names for newcomers ----------------------------------------------------------------

MADE_UP = 200       # made-up names tried once the pool's own are all taken


def pick_person(pool: NamePool, known: NameBook, *, words: int = 2, seed: str | int = 0,
                surname: str = "") -> str:
    """A name for a new person that `known` makes confusable with no one: a first name
    of the pool (with `surname`, else one of the pool's not yet anyone's, when `words`
    is 2 or more); when the pool's are all taken, a made-up one. "" when none is found."""
    lasts = [*([surname] if surname else []),
             *(s for s in pool.surnames if normalize_name(s) not in known.surnames)]
    more: list[str] = []
    for first in _firsts(pool, known, seed):
        if words < 2:
            return first
        found = _with_surname(first, lasts, known)
        if not found:         # made-up surnames, made only when wanted
            more = more or [*_made(seed, "surname", known), *pool.surnames]
            found = _with_surname(first, more, known)
        if found:
            return found
    return ""


def _with_surname(first: str, surnames: list[str], known: NameBook) -> str:
    """`first` with the first of `surnames` that makes a free name, "" when none does."""
    return next((f"{first} {last}" for last in surnames if free(f"{first} {last}", known)), "")


def _firsts(pool: NamePool, known: NameBook, seed: str | int) -> Iterator[str]:
    yield from (f for f in pool.first_names if free(f, known))
    yield from _lazily(seed, "first", known)


def _lazily(seed: str | int, kind: str, known: NameBook) -> Iterator[str]:
    """_made's names one at a time (the first free one is most often all that is taken)."""
    count = 8 if kind == "surname" else MADE_UP // 8
    return itertools.islice(made_names(_more(seed, known), kind, known, count * TRIES), count)


def _made(seed: str | int, kind: str, known: NameBook) -> list[str]:
    return syllable_names(_more(seed, known), 8 if kind == "surname" else MADE_UP // 8, kind,
                          known)


def _more(seed: str | int, known: NameBook) -> str:
    """The seed of the made-up names tried once the pool's are taken: another as the book
    grows, so that they do not begin with the names taken before (each passed over is
    held against every known name)."""
    return f"{seed}|more|{len(known.people)}|{len(known.places)}"


def pick_place(pool: NamePool, known: NameBook, *, seed: str | int = 0) -> str:
    """A name for a new place that `known` makes confusable with no place: the pool's
    first free one, else a made-up one; "" when none is found."""
    for name in itertools.chain(pool.places, _lazily(seed, "place", known)):
        if free(name, known, "places"):
            return name
    return ""


def offer(pool: NamePool, known: NameBook, *, people: int = 6, surnames: int = 4,
          places: int = 3) -> str:
    """The pool's names no one holds yet, a few of each, as the planner's prompt shows
    them ("" when it has none to offer)."""
    lines = [f"{label}: {', '.join(itertools.islice(_takeable(pool, key, known), count))}"
             for label, key, count in (("First names", "first_names", people),
                                       ("Surnames", "surnames", surnames),
                                       ("Places", "places", places))]
    return "\n".join(line for line in lines if not line.endswith(": "))


