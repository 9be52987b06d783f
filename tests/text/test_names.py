"""names: what a small model proposes as a name, and which of it is one."""

from __future__ import annotations

import pytest

from novel_agent.story.decisions import Plan
from novel_agent.text.names import (
    clean_bullets,
    name_head,
    name_problem,
    normalize_name,
    variant_spelling,
)
from novel_agent.tick.stages.plan import name_heads

TITLE = "The Drowned Man's Map"
PREMISE = "A lighthouse keeper finds a drowned man's map in the harbour archive."


@pytest.mark.parametrize("name", [
    "Mara", "Mara Voss", "Edda Lorn", "Dr. Aris Thorne", "the harbour archive",
    "Skerry Light", "O'Brien", "Jean-Luc", "Zoë Ångström", "Søren Dahl", "Éloïse",
    "Will Turner", "Said Hassan", "Mara.", "Jon Q. Public", "Mrs. Dalloway",
])
def test_plausible_names_pass(name):
    assert name_problem(name, title=TITLE, premise=PREMISE) is None


@pytest.mark.parametrize("junk, reason", [
    ("you guys know what makes my job incredible", "more than 6 words"),
    ("you know what", "a sentence, not a name"),
    ("They didn't know what to do", "a sentence, not a name"),
    ("Mara didn't", "a sentence, not a name"),
    ("The keeper was here.", "a sentence, not a name"),
    ("Who is she?", "a sentence, not a name"),
    ("lamp opened in scene 1", "a prompt marker (\"opened in scene N\")"),
    ("Mara (opened in scene 1)", "a prompt marker (\"opened in scene N\")"),
    ("opened_in", "an identifier (snake_case)"),
    ("scene_3", "an identifier (snake_case)"),
    ("location_id: 3227718265#abc", "an identifier (snake_case)"),
    ("locationid: harbour", "a key: value pair"),
    ("[loop_id]", "an identifier (snake_case)"),
    ("[Mara]", "markup or brackets"),
    ("{name}", "markup or brackets"),
    ("# Mara", "markup or brackets"),
    ("**Mara Voss**", "markup or brackets"),
    ("Agent 47", "digits"),
    ("Name: Mara", "a key: value pair"),
    ("- Mara", "a list marker"),
    ("--- ...", "mostly not letters"),
    ("Mara שלום Voss", "a mixture of scripts (HEBREW, LATIN)"),
    ("", "empty"),
    ("   ", "empty"),
])
def test_junk_is_refused_with_its_reason(junk, reason):
    assert name_problem(junk, title=TITLE, premise=PREMISE) == reason


@pytest.mark.parametrize("answer, name", [
    ("Skerry Light, a lighthouse on a rock island in the northern sea, 1911", "Skerry Light"),
    ("Edda Lorn, the keeper, forty, alone since her husband left", "Edda Lorn"),
    ("The lamp room (opened in scene 1)", "The lamp room"),
    ("Mara Voss - the ferrywoman who knows the delta's every channel", "Mara Voss"),
    ("Mara Voss", "Mara Voss"),                           # a name stays as it is
    ("Jean-Luc", "Jean-Luc"),
    ("They didn't know what to do, or where", "They didn't know what to do, or where"),
])
def test_name_head_keeps_the_name_a_description_starts_with(answer, name):
    assert name_head(answer, name_problem) == name


def test_a_plan_copying_the_setting_gets_the_place_it_names():
    check = lambda name: name_problem(name, title=TITLE, premise=PREMISE)  # noqa: E731
    described = "Edda Lorn, the keeper, forty, alone since 1909"
    plan = name_heads(Plan(intention="x", pov=described,
                           location="Skerry Light, a lighthouse on a rock island, 1911",
                           characters=[described, "Tam"]), check)
    assert (plan.pov, plan.location, plan.characters) == ("Edda Lorn", "Skerry Light",
                                                          ["Edda Lorn", "Tam"])


def test_the_title_and_the_premise_are_not_names():
    assert name_problem("the drowned man's map", title=TITLE) == "the book's title"
    assert name_problem(PREMISE, premise=PREMISE) == "the premise, not a name"
    assert name_problem("a drowned man's map", premise=PREMISE) == "the premise, not a name"
    assert name_problem("lighthouse keeper finds a drowned", premise=PREMISE) == \
        "the premise, not a name"
    # a place the premise names is still a name
    assert name_problem("the harbour archive", premise=PREMISE) is None
    assert name_problem(TITLE) is None            # without the title, it could be a name


def test_normalize_name_folds_spellings_together():
    assert normalize_name("  The  Harbour   Archive. ") == "harbour archive"
    assert normalize_name("harbour archive") == normalize_name("THE HARBOUR ARCHIVE")
    assert normalize_name("Mara Voss,") == "mara voss"
    assert normalize_name("O'Brien") == "o'brien"
    assert normalize_name("Theodora") == "theodora"     # "the" only as a word
    assert normalize_name("Straße") == normalize_name("STRASSE")


def test_clean_bullets_keeps_prose_only():
    bullets = [
        "Mara finds the map in the harbour archive.",
        "location_id: 3227718265#abc",
        "- Edda lies about the drowned man.",
        "mood: tense and quiet",
        "12 / 44 -- 99 ## 3",
        "Mara",
        "Yes indeed",
        "3227718265#abc loop",
        "1. The lamp goes out at midnight.",
    ]
    assert clean_bullets(bullets) == [
        "Mara finds the map in the harbour archive.",
        "Edda lies about the drowned man.",
        "The lamp goes out at midnight.",
    ]
    assert clean_bullets([]) == []


def test_a_name_with_a_description_in_parentheses_is_cut_to_the_name_and_never_learned():
    from novel_agent.story.decisions import extraction_from_json, plan_from_json
    from novel_agent.story.memory.store import Memory, upsert_character
    from novel_agent.text.names import name_head, name_problem

    described = "Edda Lorn (the lighthouse keeper)"       # the embedded 1.5B's answer
    assert name_problem(described) == "a description in parentheses, not a name"
    assert name_head(described, name_problem) == "Edda Lorn"
    plan = plan_from_json({"intention": "Edda finds the map.", "pov": "Edda",
                           "location": "Skerry Light", "characters": ["Edda", described],
                           "tool_calls": []}, max_tools=3)
    assert plan.characters == ["Edda", "Edda Lorn"]
    extraction = extraction_from_json({"summary": ["Edda finds the map at last."],
                                       "characters": [{"name": described, "state": "alone"}]})
    assert extraction.characters == [{"name": "Edda Lorn", "state": "alone"}]
    memory = Memory()
    upsert_character(memory, "Edda", tick=1)
    upsert_character(memory, described, tick=2)
    assert memory.characters["edda"]["name"] == "Edda"          # not renamed to the description
    upsert_character(memory, "Edda Lorn", tick=3)
    assert memory.characters["edda"]["name"] == "Edda Lorn"


# -- one person, two spellings (issue 50, item 14) ----------------------------------------

@pytest.mark.parametrize("a, b", [
    ("Katrin Holloway", "Katryn Holloway"),       # a vowel for a vowel, 6 letters
    ("Caitlin Moore", "Caitlyn Moore"),
    ("Stefan Kroll", "Stefen Kroll"),
    ("Teresa Vance", "Theresa Vance"),            # a letter more, the shorter 6
    ("Philip Marsh", "Phillip Marsh"),
    ("Mathew Cole", "Matthew Cole"),
    ("Katrin Holloway", "Kathrin Holloway"),
    ("Jonathan Reyes", "Johnathan Reyes"),
    ("katrin  holloway.", "KATRYN HOLLOWAY"),     # case and spacing aside
    ("Katrin van Holloway", "Katryn van Holloway"),
])
def test_one_letter_off_in_a_full_name_is_one_persons_name(a, b):
    assert variant_spelling(a, b) and variant_spelling(b, a)


@pytest.mark.parametrize("a, b", [
    ("Mara Voss", "Mira Voss"),                   # 4 letters: another name
    ("Anna Voss", "Anne Voss"),
    ("Tammy Voss", "Timmy Voss"),                 # 5 letters, a vowel: siblings' names
    ("Danny Voss", "Donny Voss"),
    ("Maria Voss", "Marie Voss"),                 # the end: another name
    ("Daniel Voss", "Daniela Voss"),
    ("Louis Voss", "Louise Voss"),
    ("Simon Voss", "Simone Voss"),
    ("Justin Voss", "Justine Voss"),
    ("Marta Voss", "Marla Voss"),                 # a consonant: another name
    ("Martin Voss", "Marvin Voss"),
    ("Ellen Voss", "Allen Voss"),                 # the first letter
    ("Francis Holloway", "Frances Holloway"),     # two names, known to differ
    ("Jesse Holloway", "Jessie Holloway"),
    ("Michele Holloway", "Michelle Holloway"),
    ("Anna Larsen", "Anna Larson"),               # the surname is never guessed at
    ("Katrin Holloway", "Katryn Halloway"),
    ("Katrin", "Katryn"),                         # not full names
    ("Katrin Holloway", "Katryn"),
    ("Katrin Ada Holloway", "Katryn Holloway"),
    ("Katrin Holloway", "Katrin Holloway"),       # the same name is no variant
    ("Katrin Holloway", "Kathryn Holloway"),      # two letters off ("h" and "i"/"y")
    ("Katrin Holloway", "Katyrn Holloway"),       # two letters swapped
])
def test_different_people_are_not_taken_for_one(a, b):
    assert not variant_spelling(a, b) and not variant_spelling(b, a)
