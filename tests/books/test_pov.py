"""books/pov.py: who an imported piece names, and who tells it."""

from __future__ import annotations

import pytest

from novel_agent.books.importer import guess_plan, mentions
from novel_agent.books.pov import found_dead, guess_pov, named, narrator, weights
from novel_agent.books.split import ImportedScene
from novel_agent.story.memory.store import Memory, upsert_character, upsert_location
from novel_agent.story.project.folder import Story

CAST = [{"name": n} for n in ("Clara Marsh", "Felix Aubrey", "Tomas Reyne", "Hugh Dunmore")]


def names(text: str, people=CAST) -> list[tuple[str, str]]:
    return [(m.name, text[m.start:m.end]) for m in named(people, text)]


def test_each_mention_counts_once_by_any_form_of_the_name():
    text = ("Tomas Reyne came up. Tomas laughed; Reyne always did. Mr. Aubrey nodded, "
            "and Inspector Dunmore's coat dripped. Felix Aubrey said nothing.")
    assert names(text) == [("Tomas Reyne", "Tomas Reyne"), ("Tomas Reyne", "Tomas"),
                           ("Tomas Reyne", "Reyne"), ("Felix Aubrey", "Aubrey"),
                           ("Hugh Dunmore", "Dunmore"), ("Felix Aubrey", "Felix Aubrey")]


def test_a_form_two_people_share_names_the_one_the_piece_names_in_full():
    people = [{"name": "Ida Fennick"}, {"name": "Ida Fenwick"}, {"name": "Paul Fennick"}]
    assert names("Ida Fennick sat. Ida looked up.", people) == [
        ("Ida Fennick", "Ida Fennick"), ("Ida Fennick", "Ida")]
    assert names("Ida looked up. Fennick came in.", people) == []     # no telling which
    # within a piece, a sentence's short form is told apart by the piece's whole names
    piece = "Ida Fennick sat down. Ida looked up."
    assert names("Ida looked up.", people) == []
    assert [m.name for m in named(people, "Ida looked up.", piece)] == ["Ida Fennick"]


def test_who_perceives_weighs_more_than_who_is_named():
    text = ("Felix Aubrey came in. Felix Aubrey carried the ledger, and Mr. Aubrey hid it "
            "behind the cask. Mr. Aubrey breathed hard.\n\nClara watched from the loft. She "
            "thought he looked afraid.")
    assert weights(CAST, text) == {"Felix Aubrey": 4, "Clara Marsh": 1 + 3 + 3}
    pov, cast = guess_pov(CAST, text)
    assert pov == "Clara Marsh" and cast == ["Clara Marsh", "Felix Aubrey"]


def test_a_pronoun_perceives_for_the_subject_not_the_object():
    text = "Dunmore looked at Mr. Aubrey. He thought the man was lying. He saw Aubrey's hands."
    assert weights(CAST, text) == {"Hugh Dunmore": 1 + 3 + 3 + 3, "Felix Aubrey": 2}
    said = 'Clara met Dunmore. "He saw nothing," she said. She felt cold.'
    assert weights(CAST, said)["Clara Marsh"] == 1 + 3        # speech is not narration


def test_a_first_person_piece_is_told_by_the_narrator_it_names():
    text = ("I went back in June. My name was Clara Marsh then. Felix Aubrey was at the gate. "
            "Felix Aubrey bowed. I watched him go. I remembered the snow, and I thought of "
            "Mr. Aubrey as he had been.")
    assert narrator(CAST, text) == "Clara Marsh"
    assert guess_pov(CAST, text)[0] == "Clara Marsh"
    untold = text.replace("My name was Clara Marsh then. ", "")
    assert narrator(CAST, untold) == "" and guess_pov(CAST, untold)[0] == "Felix Aubrey"
    assert narrator(CAST, untold, protagonist="Clara Marsh") == "Clara Marsh"
    assert guess_pov(CAST, untold, protagonist="Clara Marsh")[0] == "Clara Marsh"


@pytest.mark.parametrize("found", [
    "At dawn Clara found Tomas Reyne drowned in the race.",
    "Tomas Reyne lay face down in the water, dead.",
    "The body of Tomas Reyne turned in the current.",
    "Tomas Reyne had drowned in the night.",
    "They found Reyne dead by the sluice.",
])
def test_no_one_found_dead_in_the_piece_tells_it(found):
    text = (f"{found} Tomas Reyne's coat had filled. Tomas Reyne, Tomas Reyne. Clara knelt "
            "by him and felt sick.")
    assert found_dead(CAST, text) == {"Tomas Reyne"}
    pov, cast = guess_pov(CAST, text)
    assert pov == "Clara Marsh" and cast[1] == "Tomas Reyne"
    alive = "Tomas Reyne laughed. Tomas Reyne, Tomas Reyne. Clara knelt and felt sick."
    assert found_dead(CAST, alive) == set()


def test_no_one_dead_before_the_piece_tells_it():
    text = "Tomas Reyne spoke from the stairs. Tomas Reyne smiled. Clara stood very still."
    assert guess_pov(CAST, text)[0] == "Tomas Reyne"
    assert guess_pov(CAST, text, dead={"Tomas Reyne"})[0] == "Clara Marsh"
    assert guess_pov(CAST, "Tomas Reyne spoke.", dead={"Tomas Reyne"}) == ("", ["Tomas Reyne"])


def test_a_tie_goes_to_the_last_scenes_pov_then_to_who_is_named_first():
    text = "Hugh Dunmore waited. Felix Aubrey waited."
    assert guess_pov(CAST, text)[0] == "Hugh Dunmore"        # named first (not the id's order)
    assert guess_pov(CAST, text, last_pov="Felix Aubrey")[0] == "Felix Aubrey"
    assert guess_pov(CAST, text, last_pov="Clara Marsh")[0] == "Hugh Dunmore"   # not in the tie


def test_the_plan_of_a_piece_takes_its_pov_and_its_most_named_place():
    memory = Memory()
    for name in ("Felix Aubrey", "Tomas Reyne", "Clara Marsh"):
        upsert_character(memory, name, tick=1)
    for place in ("the Long Cellar", "the Mill Race"):
        upsert_location(memory, place, tick=1)
    body = ("Clara found Tomas Reyne drowned in the Mill Race. Tomas Reyne, Reyne, Reyne. "
            "Felix Aubrey, Mr. Aubrey, Aubrey. Clara saw the Long Cellar door; the Mill Race "
            "ran white.")
    plan = guess_plan(ImportedScene("The Race", body, 1), 4, memory, Story(name="v"),
                      last_pov="Felix Aubrey")
    assert plan.pov == "Clara Marsh"          # over Felix (named as often) and the drowned
    assert plan.characters == ["Clara Marsh", "Tomas Reyne", "Felix Aubrey"]
    assert plan.location == "the Mill Race"
    assert mentions(memory.locations.values(), "the Long Cellar, the long cellar, the Mill Race") \
        == ["the Long Cellar", "the Mill Race"]
