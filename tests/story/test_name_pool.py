"""The book's pool of names (names.yaml): read and checked, and the names it gives."""

from __future__ import annotations

import pytest

from novel_agent.errors import FileFormatError, ModelResponseError
from novel_agent.story.name_pool import (
    NamePool,
    fallback_pool,
    offer,
    pick_person,
    pick_place,
    pool_from_json,
    pool_text,
    read_pool,
    refilled,
)
from novel_agent.text.nomenclature import free, name_book, name_clash

POOL = NamePool(("Edda", "Mary", "Tomas", "Ilsa", "Brann", "Jory"),
                ("Lorn", "Quill", "Varga", "Ashby"),
                ("Skerry Light", "the bell tower", "the Salt Steps"), made_by="a test")
KNOWN = name_book(["Mara Quill", "Tobin Keel", "Ilse Varga"], ["the bell tower"])


def test_a_pool_reads_back_as_it_was_written(tmp_path):
    path = tmp_path / "names.yaml"
    path.write_text(pool_text(POOL))
    assert read_pool(path) == POOL
    assert path.read_text().startswith("# The book's pool of names")
    assert read_pool(tmp_path / "none.yaml") is None


@pytest.mark.parametrize("text, line, says", [
    ("first_names: [Edda]\nsurname: [Lorn]\n", 2, "unknown key 'surname'"),
    ("first_names:\n- Edda\n- Edda Lorn\n", 3, "one word is wanted"),
    ("places:\n- Skerry Light\n- 42\n", 3, "not a text"),
    ("surnames: Lorn\n", 1, "surnames must be a list"),
    ("first_names:\n- Edda\n- they didn't know\n", 3, "a sentence"),
    ("- Edda\n", 1, "a mapping"),
    ("first_names: [Edda\n", 1, "invalid YAML"),
])
def test_a_broken_pool_names_its_file_and_line(tmp_path, text, line, says):
    path = tmp_path / "names.yaml"
    path.write_text(text)
    with pytest.raises(FileFormatError) as caught:
        read_pool(path)
    assert caught.value.file == str(path) and caught.value.line == line
    assert says in str(caught.value) and str(caught.value).startswith(f"{path}:{line}: ")


def test_a_model_answer_keeps_what_can_stand_and_is_refused_when_too_little_can():
    pool = pool_from_json({"first_names": ["Edda", "Edda", "Eda", "Tomas", "Ilse Varga", "42",
                                           "Brann", "Jory", "Wenna", "Cato"],
                           "surnames": ["Lorn", "Quill", "Ashby", "Ferrow", "Lorne"],
                           "places": ["Skerry Light", "the bell tower", "Salt Steps"]})
    assert pool.first_names == ("Edda", "Tomas", "Brann", "Jory", "Wenna", "Cato")
    assert pool.surnames == ("Lorn", "Quill", "Ashby", "Ferrow")      # "Lorne": a letter off
    with pytest.raises(ModelResponseError) as caught:
        pool_from_json({"first_names": "Edda", "surnames": [], "places": [{"x": 1}]})
    assert "'first_names' holds 0 usable names, 6 at the least" in str(caught.value)


def test_a_person_takes_a_pool_name_no_known_name_makes_confusable():
    assert pick_person(POOL, KNOWN) == "Edda Lorn"
    book = KNOWN.add("Edda Lorn", "people")
    assert pick_person(POOL, book) == "Tomas Ashby"    # "Mary" is a letter from Mara; Lorn
    assert pick_person(POOL, book, words=1) == "Tomas"  # and Quill, Varga are surnames in use
    assert pick_person(POOL, book, surname="Keel") == "Tomas Keel"
    for _ in range(40):                     # the pool used up: made-up names, still free
        name = pick_person(POOL, book, seed="x")
        assert name and name_clash(name, book) is None and not book.holds(name)
        book = book.add(name, "people")


def test_a_place_takes_a_pool_name_no_known_place_makes_confusable():
    assert pick_place(POOL, KNOWN) == "Skerry Light"
    book = KNOWN.add("Skerry Light", "places").add("the Salt Step", "places")
    made = pick_place(POOL, book, seed=3)     # the bell tower is known, the Salt Steps near
    assert made not in POOL.places and name_clash(made, book, "places") is None


def test_the_planner_is_offered_the_names_no_one_holds():
    said = offer(POOL, KNOWN.add("Edda Lorn", "people"), people=3)
    assert said.splitlines() == ["First names: Tomas, Brann, Jory",
                                 "Surnames: Ashby", "Places: Skerry Light, the Salt Steps"]
    assert offer(NamePool(), KNOWN) == ""


def test_the_fallback_pool_is_made_up_the_same_each_time_and_free():
    pool = fallback_pool("harbour", KNOWN)
    assert pool == fallback_pool("harbour", KNOWN) and pool.made_by == "the syllable generator"
    assert len(pool.first_names) == 24 and len(pool.surnames) == 16 and len(pool.places) == 12
    assert all(name_clash(n, KNOWN) is None for n in pool.first_names)
    assert pool_from_json(pool.to_dict()).first_names == pool.first_names   # it would pass


def test_made_up_first_names_do_not_begin_with_those_given_before(monkeypatch):
    """Once the pool's first names are taken, each newcomer's made-up one is among the
    first tried, however many were given before (they began with the same names each
    time: a 300-tick stress book's rename held hundreds against every known name)."""
    from novel_agent.story import name_pool
    from novel_agent.text import syllables

    asked: list[str] = []

    def counted(name, known, kind="people"):
        asked.append(name)
        return free(name, known, kind)

    monkeypatch.setattr(name_pool, "free", counted)
    monkeypatch.setattr(syllables, "free", counted)
    book, tried = KNOWN.add("Edda Lorn", "people"), []
    for _ in range(60):
        asked.clear()
        name = pick_person(POOL, book, seed="x", surname="Vane")
        assert name and name_clash(name, book) is None
        book = book.add(name, "people")
        tried.append(len(asked))
    assert max(tried[-20:]) < 30, tried          # it was 12 to 79, and more the longer


def test_a_list_whose_names_are_all_taken_is_refilled_with_made_up_ones():
    pool = NamePool(("Edda", "Tomas"), ("Lorn", "Hale"), ("Skerry Light",), made_by="a test")
    book = name_book(["Mara Quill"], ["the bell tower"]).add("Edda Fenn", "people")
    assert refilled(pool, book, "x") is None                  # Tomas is left to take
    book = book.add("Tomas Fenn", "people")
    more = refilled(pool, book, "x")
    assert more is not None and (more.surnames, more.places) == (pool.surnames, pool.places)
    assert len(more.first_names) == 24 and all(free(f, book) for f in more.first_names)
    assert more.made_by == "a test, then the syllable generator"
    assert more == refilled(pool, book, "x") and refilled(more, book, "x") is None
    assert offer(more, book).startswith(f"First names: {', '.join(more.first_names[:6])}\n")
    assert pick_person(more, book) == f"{more.first_names[0]} Lorn"
    empty = NamePool(("Edda",), (), ("Skerry Light",))        # an empty list stays so
    assert refilled(empty, book, "x").surnames == ()
