"""The naming rule the tick's guard and the audit share: names a reader would confuse."""

from __future__ import annotations

import random

import pytest

from novel_agent.text.names import normalize_name
from novel_agent.text.nomenclature import (
    NameBook,
    allowed,
    distance,
    distance_within,
    first_name,
    name_book,
    name_clash,
    near_name,
)

BOOK = name_book(["Mary Quill", "Tobin Keel", "Ilse Varga", "Tom", "Al Brandt"],
                 ["the bell tower", "the north quay", "Ely"], aliases=["the Widow"])


def clash(name: str, kind: str = "people") -> tuple[str, str] | None:
    found = name_clash(name, BOOK, kind)
    return (found.known, found.how) if found else None


def test_a_first_name_in_use_is_repeated_by_no_one_new():
    assert clash("Mary Fenn") == ("Mary Quill", "first name")
    assert clash("Dr. Ilse Moreno") == ("Ilse Varga", "first name")
    assert clash("Captain Tobin Rowe") == ("Tobin Keel", "first name")
    assert clash("Al Morrow") == ("Al Brandt", "first name")      # short, but the same
    assert clash("Mary Quill") is None                             # the known one herself
    assert clash("Captain Harrow") is None and first_name("Captain Harrow") == "harrow"
    assert first_name("The Drowned Stranger") == ""                # an epithet: no first name


@pytest.mark.parametrize("name, known", [
    ("Mara", "Mary"),                 # a letter off the first name of Mary Quill
    ("Mara Vane", "Mary Quill"),      # a new full name whose first name is a letter off
    ("Tobin Keell", "Tobin Keel"),    # a letter off a full name
    ("Tobyn Keal", "Tobin Keel"),     # two letters off a name of eight letters or more
    ("Tim", "Tom"),                   # three letters: one off
    ("Ilsa", "Ilse"),
])
def test_one_or_two_letters_from_a_known_name(name, known):
    assert clash(name) is not None and known in clash(name)[0]


def test_short_names_sensibly():
    assert clash("Ed") is None and clash("Ab") is None     # under three letters: only the same
    assert clash("Al") is None and clash("Tobin") is None  # someone's first name alone
    assert clash("Tia") is None          # two letters from Tom: too many for three letters
    assert first_name("van Dyke") == "" and first_name("Al Morrow") == "al"
    assert clash("Marta") is None        # two letters from Mary: too many under eight
    assert clash("Tobias Kell") is None  # three letters from Tobin Keel
    assert allowed("al", "ed") == 0 and allowed("tom", "tim") == 1
    assert allowed("tobin keel", "tobin keell") == 2


def test_places_are_held_against_places():
    assert clash("the bel tower", "places") == ("the bell tower", "variant")
    assert clash("The North Quay.", "places") is None           # the same place
    assert clash("Eli", "places") == ("Ely", "variant")
    assert clash("the bell yard", "places") is None
    assert clash("Tobin Keell", "places") is None               # a person's name: not a place's


def test_what_a_clash_says():
    assert name_clash("Mary Fenn", BOOK).says("Mary Fenn") == \
        "'Mary Fenn' repeats the first name of 'Mary Quill'"
    assert name_clash("Tobin Keell", BOOK).says("Tobin Keell") == \
        "'Tobin Keell' is a variant of 'Tobin Keel'"


def test_a_name_added_to_the_book_is_held_against_too():
    book = NameBook().add("Mara Fenn", "people").add("Skerry Light", "places")
    assert name_clash("Mara Lorn", book).how == "first name"
    assert name_clash("Skery Light", book, "places").known == "Skerry Light"
    assert name_clash("Edda Lorn", book) is None


def test_near_name_skips_names_too_long_or_short_to_be_near_and_finds_the_same():
    """A name whose length differs by more than the allowed distance, or whose word
    count differs, is never measured (known_names files the names by both): the answer
    is what measuring all gives, ties going to the first known."""
    rng = random.Random(7)
    letters = "aeiouklmnrst"
    known = ["".join(rng.choice(letters) for _ in range(rng.randint(3, 12))).title()
             + rng.choice(["", " " + "".join(rng.choice(letters) for _ in range(5))])
             for _ in range(400)]

    def measured(name: str) -> str:          # near_name before the length check
        n, best, found = normalize_name(name), 3, ""
        for k in known:
            kn = normalize_name(k)
            if kn == n:
                return ""
            if len(kn.split()) == len(n.split()):
                d = distance(n, kn)
                if d <= allowed(n, kn) and d < best:
                    best, found = d, k
        return found

    names = [k[:-1] for k in known[:60]] + [k + "s" for k in known[60:120]] + known[120:140]
    assert [near_name(n, known) for n in names] == [measured(n) for n in names]
    assert any(near_name(n, known) for n in names)


def test_the_banded_distance_is_the_distance_whenever_it_is_within_the_bound():
    rng = random.Random(3)
    for _ in range(5000):
        a, b = ("".join(rng.choice("abc ") for _ in range(rng.randint(0, 9))) for _ in "ab")
        k = rng.randint(0, 3)
        d = distance(a, b)
        assert distance_within(a, b, k) == (d if d <= k else None), (a, b, k)


def test_the_letter_pair_test_never_rejects_a_name_within_reach():
    """near_known skips a known name when more than 2k of the new name's letter pairs are
    not among its own: a name k edits away keeps all but 2k of them, so the skip loses no
    finding (random names, and each one or two edits off)."""
    import random

    from novel_agent.text.nomenclature import _grams, distance

    rng = random.Random(5)
    letters = "aeioulmnrstk"
    for _ in range(3000):
        a = "".join(rng.choice(letters) for _ in range(rng.randint(3, 12)))
        b = list(a)
        for _ in range(rng.randint(1, 2)):
            at = rng.randrange(len(b) + 1)
            how = rng.choice("sid")
            if how == "s" and at < len(b):
                b[at] = rng.choice(letters)
            elif how == "i":
                b.insert(at, rng.choice(letters))
            elif at < len(b) and len(b) > 2:
                del b[at]
        b = "".join(b)
        d = distance(a, b)
        misses = sum(a[i:i + 2] not in _grams(b) for i in range(len(a) - 1))
        assert misses <= 2 * d, (a, b, d, misses)


def brute_clash(name: str, people: list[str]) -> tuple[str, str] | None:
    """name_clash of a person as the rule says it, every known name measured."""
    n, first = normalize_name(name), first_name(name)
    known = [*people, *(p.split()[0] for p in people if len(p.split()) > 1)]
    best, found = 3, ""
    for k in known:
        kn = normalize_name(k)
        if kn == n:
            best, found = -1, ""
            break
        if len(kn.split()) == len(n.split()) and (d := distance(n, kn)) <= allowed(n, kn) \
                and d < best:
            best, found = d, k
    if found:
        return found, "variant"
    firsts: dict[str, str] = {}
    for p in people:
        firsts.setdefault(first_name(p), p)
    if best == -1 or not first or n in {normalize_name(p) for p in people} or (
            len(n.split()) == 1 and first in firsts):
        return None
    if first in firsts:
        return firsts[first], "first name"
    near = [owner for other, owner in firsts.items()
            if allowed(first, other) and distance(first, other) <= allowed(first, other)]
    return (near[0], "near first name") if near else None


def test_the_rule_measures_only_names_that_share_enough_letter_pairs_and_finds_the_same():
    """name_clash looks at the known names (and first names) sharing enough letter pairs
    with a new one; its answer is the one of measuring every known name, in a book of
    hundreds of names alike (a stress book's) and as names are added to it."""
    rng = random.Random(11)
    syllables = ["ka", "ve", "lor", "mi", "dan", "sul", "tir", "ob", "en", "ra", "is", "mel"]

    def word(parts: int) -> str:
        return "".join(rng.choice(syllables) for _ in range(parts)).capitalize()

    people = list(dict.fromkeys(f"{word(2)} {word(3)}" for _ in range(300)))
    book = name_book(people, [])
    names = [f"{word(2)} {word(3)}" for _ in range(150)] + [word(rng.choice((1, 2)))
                                                              for _ in range(150)]
    names += [p[:-1] for p in people[:40]] + [p.split()[0] + "s Vane" for p in people[40:80]]
    found = [(c.known, c.how) if (c := name_clash(n, book)) else None for n in names]
    assert found == [brute_clash(n, people) for n in names]
    assert {f[1] for f in found if f} == {"variant", "first name", "near first name"}
    for name in names[:60]:               # a book grown by add answers as one made whole
        if name_clash(name, book) is None:
            book, people = book.add(name, "people"), [*people, name]
    assert [name_clash(n, book) for n in names[60:]] == \
        [name_clash(n, name_book(people, [])) for n in names[60:]]


def test_the_filing_of_names_by_letter_pairs_can_be_emptied_and_is_made_again(monkeypatch):
    from novel_agent.text import nomenclature

    book = name_book(["Mara Quill", "Tobin Keel"], ["the bell tower"])
    assert name_clash("Tobin Keell", book).known == "Tobin Keel"
    monkeypatch.setattr(nomenclature, "FILED_MOST", 2)    # each new name empties it now
    for n in range(5):
        assert name_clash(f"Edda Lorn{n}", book) is None
        name_book([f"Wenna Hale{n}"], []).holds("x")
    assert name_clash("Tobin Keell", book).known == "Tobin Keel"
    assert name_clash("Mari Fenn", book).how == "near first name"
    assert name_clash("the bel tower", book, "places").known == "the bell tower"
