"""What a small model's plan and extraction may put in memory: real names, loops asked
as questions, facts in their own words, one name per person, a title per scene."""

from __future__ import annotations

from dataclasses import replace

from novel_agent.story.decisions import Extraction, Plan, ToolCall
from novel_agent.story.memory.extraction import apply_extraction
from novel_agent.story.memory.store import Memory, upsert_character
from novel_agent.text.names import fact_problem, loop_problem, person_problem
from novel_agent.tick.stages import plan, tools
from tests.support.scripted import ScriptedModel
from tests.support.ticking import run_ticks

PROSE = ("Edda Lorn dragged the drowned man up the shingle. The sailor had a map sewn into "
         "his coat, and on it was a room in her own lighthouse that she had never seen. "
         "Old Tomas watched from the boat.")


def memory_with_edda() -> Memory:
    memory = Memory()
    upsert_character(memory, "Edda Lorn", tick=1)
    return memory


def test_a_common_noun_is_not_a_person():
    assert person_problem("strangers") == "a common noun in lower case, not a name"
    assert person_problem("the fishermen") is not None
    assert person_problem("Edda Lorn") is None and person_problem("Jan van Dyke") is None


def test_a_loop_is_a_question_in_its_own_words_and_whole():
    assert loop_problem("Who drew the room on the drowned man's map?") is None
    assert loop_problem("The stranger cries for help.") == "not a question"
    assert loop_problem("Who are you? Edda asked the young man in a hushed voice.") == \
        "not a question"
    assert loop_problem("the_stranger_cries") == "an identifier, not a question"
    assert loop_problem("What might have happened to edda during_ ?") == \
        "an identifier, not a question"
    assert loop_problem("What room in her own lighthouse that she had never seen?",
                        PROSE) == "a sentence copied from the scene"
    cut = "Why did the keeper " + "keep " * 30 + "the lamp withoutt"
    assert loop_problem(cut[:160]) == "cut off"


def test_a_fact_copied_from_the_scene_or_cut_off_is_no_fact():
    assert fact_problem("The drowned man carried a map of Skerry Light.", PROSE) is None
    assert fact_problem("The sailor had a map sewn into his coat", PROSE) == \
        "a sentence copied from the scene"


def test_the_extractor_records_real_names_questions_and_no_copies():
    memory = memory_with_edda()
    extraction = Extraction(
        summary=["Edda finds the map."],
        facts=["The sailor had a map sewn into his coat, and on it was a room",
               "The map shows a room Edda has never seen."],
        characters=[{"name": "strangers", "state": "crying"},
                    {"name": "Edda", "state": "holds the map"},
                    {"name": "Tomas", "state": "watches from the boat"},
                    {"name": "Mara Quill", "state": "not in this scene"}],
        loops_opened=["The sailor had a map sewn into his coat.",
                      "Whose room is marked on the map? ?"])
    apply_extraction(memory, extraction, tick=2, prose=PROSE)
    assert sorted(c["name"] for c in memory.characters.values()) == ["Edda Lorn", "Tomas"]
    assert [f["text"] for f in memory.facts] == ["The map shows a room Edda has never seen."]
    assert [loop["description"] for loop in memory.loops] == ["Whose room is marked on the map?"]


def test_the_planners_tools_refuse_lowercase_people_and_loops_that_are_no_questions():
    memory = memory_with_edda()
    lines = tools.run_tools(memory, [
        ToolCall("create_character", name="strangers", detail="men on the shore"),
        ToolCall("open_loop", name="the_stranger_cries", detail="The stranger cries."),
        ToolCall("open_loop", name="map", detail="Who drew the map?"),
        ToolCall("open_loop", name="who_drew_the_map", detail="")], tick=2, limit=4)
    assert lines[0].startswith("rejected name 'strangers'")
    assert lines[1] == "open_loop skipped: 'The stranger cries.' is not a question"
    assert lines[2] == "Opened loop [who_drew_the_map]: Who drew the map?"
    assert lines[3] == "Still open loop [who_drew_the_map]: Who drew the map?"
    assert [c["name"] for c in memory.characters.values()] == ["Edda Lorn"]
    assert len(memory.loops) == 1


def test_a_scene_lists_each_person_once_by_the_name_memory_knows():
    memory = memory_with_edda()
    p = Plan(title="T", intention="I", pov="Edda", location="Skerry Light",
             characters=["Edda", "Edda Lorn", "stranger"])
    fixed = plan.canonical_names(p, lambda n: __import__(
        "novel_agent.story.memory.store", fromlist=["find_person"]).find_person(memory, n))
    assert fixed.pov == "Edda Lorn" and fixed.characters == ["Edda Lorn"]


def test_a_repeated_title_is_replaced_from_the_intention():
    p = Plan(title="The Lighthouse Keeper", intention="Edda opens the drowned man's map by "
             "the lamp.", pov="Edda Lorn", location="Skerry Light")
    fixed, warning = plan.distinct_title(p, ["The Lighthouse Keeper"])
    assert fixed.title == "The Drowned Man's Map"
    assert "is an earlier scene's" in warning
    same, none = plan.distinct_title(p, ["Another"])
    assert same.title == "The Lighthouse Keeper" and none == ""
    bare = Plan(title="The Keeper", intention="She waits.", pov="Edda Lorn", location="")
    assert plan.distinct_title(bare, ["The Keeper", "The Keeper 2"])[0].title == "The Keeper 3"
    joined = replace(p, title="The Drowned Stranger's Map",     # the demo's 'The Map And'
                     intention="Edda Lorn discovers the map and the strange chamber.")
    assert plan.distinct_title(joined, ["The Drowned Stranger's Map"])[0].title == "The Map"
    assert plan.distinct_title(joined, ["The Drowned Stranger's Map", "The Map"])[0].title \
        == "The Strange Chamber"


def test_two_ticks_with_the_same_planned_title_get_two_titles(project):
    first = {"title": "The Lighthouse Keeper", "intention": "Mara finds a drowned man's map.",
             "pov": "Mara Quill", "location": "The tower", "characters": ["Mara Quill"],
             "tool_calls": []}
    second = dict(first, intention="Mara climbs to the sealed room the map shows.")
    model = ScriptedModel().add("planner", first).add("planner", second)
    one, two = run_ticks(project, 2, model, offline_seed=0)
    titles = [r.scene_path.read_text().split("title: ", 1)[1].split("\n", 1)[0] for r in (one, two)]
    assert titles == ["The Lighthouse Keeper", "The Sealed Room"]


def test_an_embedded_models_extractor_is_not_asked_for_the_audits_keys(project):
    """A 1.5B fills "present", "where", "knows"... with sentences: on the local provider
    neither the prompt nor the grammar's schema has them; other providers keep them."""
    asked = {}
    for provider in ("offline", "local"):
        text = project.project_file.read_text().replace("provider: offline",
                                                        f"provider: {provider}")
        project.project_file.write_text(text + "context:\n  encoding: o200k_base\n")
        model = ScriptedModel()
        run_ticks(project, 1, model, offline_seed=0)
        (request,) = model.calls("extractor")
        asked[provider] = (request.messages[0]["content"], request.json_schema["properties"])
        project.project_file.write_text(text)
    prompt, schema = asked["offline"]
    assert '"present", "recalled"' in prompt and {"present", "where", "knows"} <= set(schema)
    prompt, schema = asked["local"]
    assert "present" not in prompt and "knows" not in prompt
    assert not {"present", "where", "knows", "status", "clock"} & set(schema)
    assert {"summary", "characters", "loops_opened"} <= set(schema)


def test_a_plan_keeps_no_sentence_copied_from_the_planners_instructions(project):
    """The 1.5B planning scene 1 wrote the first-scene instruction into its intention."""
    copied = ("Edda finds a drowned stranger carrying a map of her own lighthouse. In it the "
              "premise's first event happens, as the premise tells it (who finds what, and "
              "where), and its intention says so.")
    first = {"title": "The Map", "intention": copied, "pov": "Mara Quill",
             "location": "The tower", "characters": ["Mara Quill"], "tool_calls": []}
    model = ScriptedModel().add("planner", first)
    (result,) = run_ticks(project, 1, model, offline_seed=0)
    assert result.plan.intention == ("Edda finds a drowned stranger carrying a map of her own "
                                     "lighthouse.")
    assert any("copied its instructions" in w for w in result.warnings)
    writer = model.calls("writer")[0].messages[-1]["content"]
    assert "who finds what" not in writer and "a map of her own lighthouse" in writer


def test_an_intention_that_is_all_copy_stays_whole():
    p = Plan(title="T", intention="Introduce the protagonist and the world, and create them "
             "with tools.", pov="Edda Lorn", location="Skerry Light")
    assert plan.own_words(p, "introduce the protagonist and the world, and create them "
                          "with tools.") == (p, "")


def test_the_premises_unnamed_people_are_named_by_its_epithet():
    """The 1.5B called the premise's drowned stranger "the drowned stranger": rejected as
    a common noun, he was in no cast. The premise's own epithet is a name; the protagonist's
    ("the keeper") is the protagonist; any other common noun is left to be rejected."""
    premise = "A lighthouse keeper finds a drowned stranger carrying a map of her lighthouse."
    p = Plan(title="T", intention="I", pov="the keeper", location="Skerry Light",
             characters=["the drowned stranger", "strangers", "a sailor", "Tobin Keel"])
    named = plan.premise_epithets(p, premise, "Edda Lorn, the keeper, forty")
    assert named.pov == "Edda Lorn"
    assert named.characters == ["The Drowned Stranger", "strangers", "a sailor", "Tobin Keel"]
    assert plan.premise_epithets(p, premise).pov == "The Keeper"    # no protagonist line


def test_no_pronoun_day_month_title_or_sentence_opener_is_a_person():
    assert person_problem("She") == "a pronoun, not a name"
    assert person_problem("His") == "a pronoun, not a name"
    assert person_problem("Beneath") == "a word that opens a sentence, not a name"
    assert person_problem("Afterwards") == "a word that opens a sentence, not a name"
    assert person_problem("Tuesday") == "a day of the week, not a name"
    assert person_problem("October") == "a month, not a name"
    assert person_problem("Miss") == "a title alone, not a name"
    assert person_problem("Mr.") == "a title alone, not a name"
    for name in ("Miss Harrow", "June", "Tobin", "Edda Lorn"):
        assert person_problem(name) is None, name


def test_the_tick_extractor_makes_no_character_of_a_pronoun_a_day_or_part_of_a_place():
    memory = memory_with_edda()
    prose = ("She came down Keel Street on Thursday. That was when Tobin saw her. Beneath "
             "the lamp, Miss Harrow waited for Edda.")
    said = ["She", "Thursday", "That", "Keel", "Street", "Beneath", "Miss", "Tobin"]
    extraction = Extraction(summary=["Edda comes down Keel Street."],
                            characters=[{"name": n, "state": "here"} for n in said])
    changes = apply_extraction(memory, extraction, tick=2, prose=prose)
    assert sorted(c["name"] for c in memory.characters.values()) == ["Edda Lorn", "Tobin"]
    assert changes == ["new character Tobin: here"]
