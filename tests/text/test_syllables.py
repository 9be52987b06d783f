"""The syllable generator: the book's made-up names when no model makes them."""

from __future__ import annotations

import re

import pytest

from novel_agent.text.names import name_problem, person_problem
from novel_agent.text.nomenclature import NameBook, name_book, name_clash
from novel_agent.text.syllables import KINDS, pronounceable, syllable_names


@pytest.mark.parametrize("kind", KINDS)
def test_the_same_seed_gives_the_same_names_and_another_seed_others(kind):
    names = syllable_names("harbour", 20, kind)
    assert len(names) == 20 and names == syllable_names("harbour", 20, kind)
    assert names != syllable_names("harbour2", 20, kind)
    assert len({n.lower() for n in names}) == 20


@pytest.mark.parametrize("kind", KINDS)
def test_every_name_can_be_said_and_is_a_name(kind):
    for seed in range(20):
        for name in syllable_names(seed, 16, kind):
            assert pronounceable(name), name
            assert not re.search(r"[^aeiouy]{3}", re.sub(r"th|sh|ck|ll|rr|nn", "c", name.lower()))
            assert name[0].isupper() and 3 <= len(name) <= 16, name
            assert name_problem(name) is None and person_problem(name) is None, name


def test_no_name_made_is_confusable_with_a_known_one_or_with_another():
    plain, spots = syllable_names(1, 40, "first"), syllable_names(1, 30, "place")
    known = name_book(["Mara Quill", "Tobin Keel", f"{plain[3]} Varga"], spots[:2])
    made = syllable_names(1, 40, "first", known)
    assert plain[3] not in made and len(made) == 40
    assert all(name_clash(n, known) is None for n in made)
    book = NameBook()
    for name in made:                         # nor are two of them
        assert name_clash(name, book) is None, name
        book = book.add(name, "people")
    places = syllable_names(1, 30, "place", known)
    assert not set(spots[:2]) & set(places)
    assert all(name_clash(p, known, "places") is None for p in places)


def test_pronounceable_says_no_to_what_cannot_be_said():
    assert pronounceable("Morrin") and pronounceable("Thora")
    assert not pronounceable("Strkla") and not pronounceable("Brr") and not pronounceable("Aeio")
    assert not pronounceable("Mara2")
