"""The writer's length and form: its token limit follows the scene's words; an answer
over it is cut at a sentence, continued only when short; scaffolding comes off."""

from __future__ import annotations

import pytest

from novel_agent.config.layers import load_config
from novel_agent.errors import TickError
from novel_agent.models.base import WORDS, Completion
from novel_agent.models.providers import LOCAL
from novel_agent.tick.stages import write
from tests.support.scripted import ScriptedModel
from tests.support.ticking import run_ticks

PLAN = {"title": "The Lamp Room", "intention": "Mara climbs the tower.", "pov": "Mara Quill",
        "location": "The tower", "characters": ["Mara Quill"], "tool_calls": []}
MESSAGES = [{"role": "user", "content": "Write the scene."}]
SENTENCE = "Mara climbed the stair and counted the steps under her breath. "
OTHER = "The lamp room smelled of paraffin, and the glass wept with the cold. "


def test_the_writer_limit_follows_scene_max_words_unless_set():
    assert load_config().max_tokens("writer") == 700                       # 400 words
    assert load_config(flags={"generation.scene_max_words": 200}).max_tokens("writer") == 350
    assert load_config(flags={"generation.scene_max_words": 1000,
                              "llm.writer_max_tokens": 900}).max_tokens("writer") == 900


def test_a_long_answer_cut_off_is_trimmed_at_a_sentence_not_continued():
    long = SENTENCE * 30 + "Then the lamp"          # 330 words, cut off mid-sentence
    model = ScriptedModel().add("writer", Completion(text=long, finish_reason="length"))
    prose, call = write.run(model, MESSAGES, max_tokens=700, min_words=200)
    assert len(model.calls("writer")) == 1
    assert prose == (SENTENCE * 30).strip()
    assert "cut off at the 700-token limit: trimmed to its last complete sentence" in call.warning


def test_an_answer_that_stops_in_mid_sentence_is_trimmed_to_its_last_sentence():
    """A model that stops (not cut off) on a comma, as the demo's scene 2 did ("When he
    finally spoke again,"), lands its last complete sentence, and the tick says so."""
    text = SENTENCE * 20 + "When he finally spoke again,"
    model = ScriptedModel().add("writer", Completion(text=text, finish_reason="stop"))
    prose, call = write.run(model, MESSAGES, max_tokens=700, min_words=100)
    assert prose == (SENTENCE * 20).strip()
    assert "stopped in mid-sentence: trimmed to its last complete sentence" in call.warning


def test_a_short_answer_stopped_in_mid_sentence_is_continued_not_cut():
    """Under scene_min_words, an answer that stopped on a comma (the demo's 158-word scene
    2) is asked to go on, as one cut off by the limit is."""
    model = (ScriptedModel().add("writer", Completion(text=SENTENCE * 5 + "When he spoke,",
                                                      finish_reason="stop"))
             .add("writer", Completion(text=" he said the lamp was cold. " + SENTENCE * 20)))
    prose, call = write.run(model, MESSAGES, max_tokens=700, min_words=200)
    assert len(model.calls("writer")) == 2
    assert "When he spoke, he said the lamp was cold." in prose and len(prose.split()) > 200
    assert call.warning == ""


def test_a_lean_models_short_answer_that_ended_its_sentence_is_continued_too():
    """The 1.5B ended a scene at 148 words on a line of dialogue ("Who are you?"), under
    scene_min_words: on a lean model (`short`) it is asked to go on, as a cut-off one is;
    elsewhere a scene that ends is kept as it ends."""
    ended = SENTENCE * 5 + '"Who are you?"'
    model = (ScriptedModel().add("writer", Completion(text=ended, finish_reason="stop"))
             .add("writer", Completion(text="He did not answer. " + SENTENCE * 20)))
    prose, call = write.run(model, MESSAGES, max_tokens=700, min_words=200, short=True)
    assert len(model.calls("writer")) == 2
    assert '"Who are you?"\n\nHe did not answer.' in prose     # a paragraph of its own
    assert len(prose.split()) > 200
    other = ScriptedModel().add("writer", Completion(text=ended, finish_reason="stop"))
    assert write.run(other, MESSAGES, max_tokens=700, min_words=200)[0] == ended.strip()
    assert len(other.calls("writer")) == 1


def test_a_short_answer_cut_off_is_continued_until_it_has_its_words():
    model = (ScriptedModel().add("writer", Completion(text=SENTENCE * 5 + "The l",
                                                      finish_reason="length"))
             .add("writer", Completion(text="amp was cold. " + SENTENCE * 20)))
    prose, call = write.run(model, MESSAGES, max_tokens=700, min_words=200)
    assert len(model.calls("writer")) == 2 and "The lamp was cold." in prose
    assert call.warning == ""


def test_a_scene_over_its_words_is_cut_at_a_sentence_within_them():
    model = ScriptedModel().add("writer", SENTENCE * 40)          # 440 words, finished
    prose, call = write.run(model, MESSAGES, max_tokens=700, min_words=200, max_words=400)
    assert prose == (SENTENCE * 36).strip() and len(prose.split()) == 396
    assert call.warning == ("the scene had 440 words: cut at its last sentence within "
                            "generation.scene_max_words (400)")


def test_scaffolding_and_the_restated_title_come_off_the_scene(project):
    answer = ("```markdown\n# Scene 1: The Lamp Room\n---\n**The Lamp Room**\n\n"
              "Mara lit the lamp. The sea answered.\n\n| who | what |\n|---|---|\n"
              "| Mara | keeper |\n\nShe waited.\n---\nWord count: 9\n```")
    model = ScriptedModel().add("planner", PLAN).add("writer", answer)
    (result,) = run_ticks(project, 1, model, offline_seed=0)
    body = result.scene_path.read_text().split("---\n", 2)[2]
    assert body.strip() == "Mara lit the lamp. The sea answered.\n\nShe waited."


ENDING = ("A group of fishermen appeared outside the window, looking scared and confused by "
          "what they saw.")


def test_a_copied_paragraph_is_taken_out_and_said():
    messages = [{"role": "user", "content": f"## The last scenes in full\n{ENDING}\n\n"
                                            "Write scene 2 now."}]
    answer = f"The fishermen knocked twice. {SENTENCE * 2}\n\n{ENDING.upper()}\n\nShe let them in."
    model = ScriptedModel().add("writer", answer)
    prose, call = write.run(model, messages, max_tokens=700, min_words=10)
    assert prose == f"The fishermen knocked twice. {SENTENCE * 2}\n\nShe let them in."
    assert len(model.calls("writer")) == 1                 # enough new words: not asked again
    assert call.warning == "1 passage copied from the prompt or an earlier scene taken out"


def test_a_scene_left_short_by_copies_is_asked_for_once_more(project):
    first = f"{SENTENCE * 3}\n\n{ENDING}"
    copy = f"She woke.\n\n{ENDING}"
    fresh = "The fishermen came in out of the rain. " * 30
    model = (ScriptedModel().add("planner", PLAN).add("writer", first)
             .add("planner", PLAN).add("writer", copy).add("writer", fresh))
    one, two = run_ticks(project, 2, model, offline_seed=0)
    assert one.scene_path.read_text().rstrip().endswith(ENDING)        # nothing to copy yet
    asked, again = model.calls("writer")[1:]
    assert again.messages[-1]["content"] == f"{asked.messages[-1]['content']}\n\n{write.ANEW}"
    assert two.scene_path.read_text().split("---\n", 2)[2].strip() == fresh.strip()
    assert "the writer copied its prompt (earlier scenes or its notes): asked once more not to" in two.notices


def test_an_answer_that_only_copies_its_prompt_fails_the_tick_and_changes_nothing(project,
                                                                                  snapshot):
    first = f"{SENTENCE * 3}\n\n{ENDING}"
    model = ScriptedModel().add("planner", PLAN).add("writer", first)
    run_ticks(project, 1, model, offline_seed=0)
    before = snapshot(project.root)
    model = ScriptedModel().add("planner", PLAN).add("writer", first).add("writer", first)
    with pytest.raises(TickError, match="the answer is mostly scaffolding or copies of its prompt"):
        run_ticks(project, 1, model, offline_seed=0)
    assert len(model.calls("writer")) == 2
    assert snapshot(project.root) == before


def test_a_scene_stopped_past_its_words_is_cut_at_a_sentence_within_them():
    """A streaming model stops reading once the answer passes max_words: the writer asks
    for that, and cuts what came at its last sentence within them, no mid-sentence note."""
    stopped = SENTENCE * 36 + "Mara climbed the stair and"        # 401 words, then stopped
    model = ScriptedModel().add("writer", Completion(text=stopped, finish_reason=WORDS))
    prose, call = write.run(model, MESSAGES, max_tokens=700, min_words=200, max_words=400)
    assert model.calls("writer")[0].max_words == 400
    assert prose == (SENTENCE * 36).strip()
    assert call.warning == ("the writer went on past generation.scene_max_words (400): "
                            "stopped there and cut at its last sentence within them")


def test_the_writer_asks_for_prose_under_its_grammar_and_stops():
    model = ScriptedModel().add("writer", Completion(text=SENTENCE * 5 + "The l",
                                                     finish_reason="length"))
    model.add("writer", Completion(text="amp was cold. " + SENTENCE * 20))
    write.run(model, MESSAGES, max_tokens=700, min_words=200)
    first, more = model.calls("writer")
    assert first.grammar == write.PROSE_GRAMMAR and more.grammar == write.CONTINUATION_GRAMMAR
    assert "\nTitle:" in first.stop and len(first.stop) <= 4


def test_scaffolding_inside_the_scene_comes_off_too():
    answer = (f"{SENTENCE * 10}\n- Opened loop [the_stranger_cries]: who is he?\n"
              f"Title: The Stranger's Descent\n\n{OTHER * 10}\nScene intention: Edda waits.\n"
              "POV: Edda Lorn (now: Update Edda's character)\nLocation: Skerry Light")
    prose, call = write.run(ScriptedModel().add("writer", answer), MESSAGES, max_tokens=700,
                            min_words=100)
    assert [p.strip() for p in prose.split("\n\n")] == [(SENTENCE * 10).strip(),
                                                         (OTHER * 10).strip()]


def test_a_scene_that_is_mostly_scaffolding_is_written_again():
    junk = ("- Open loop [the_stranger_cries]: who is the stranger crying for help?\n"
            "Title: The Keeper\nScene intention: Edda finds the map and opens it by the lamp.\n"
            "POV: Edda Lorn (now: Update Edda's character with the map)\nShe waited.")
    model = ScriptedModel().add("writer", junk).add("writer", SENTENCE * 20)
    prose, call = write.run(model, MESSAGES, max_tokens=700, min_words=100)
    assert prose == (SENTENCE * 20).strip()
    assert write.ANEW in model.calls("writer")[1].messages[-1]["content"]
    assert "asked once more" in call.warning


def test_a_scene_that_is_mostly_scaffolding_twice_fails():
    from novel_agent.errors import ModelResponseError
    junk = ("Title: The Keeper\nScene intention: Edda finds the map and opens it by the lamp.\n"
            "POV: Edda Lorn (now: Update Edda's character with the map)\nShe waited.")
    model = ScriptedModel().add("writer", junk).add("writer", junk)
    with pytest.raises(ModelResponseError, match="mostly scaffolding or copies"):
        write.run(model, MESSAGES, max_tokens=700, min_words=100)


SCENE_1 = ("She turned around quickly and saw a young man approaching her. He wore a trench "
           "coat with a cap and held a long knife in his hand.")
NEAR = ("As she reached the gate she saw a young man approaching her. He wore a trench coat "
        "with a cap and held a long knife in hand.")


def test_a_local_models_near_copy_of_an_earlier_scene_and_a_line_said_twice_go():
    """The demo's scene 3 wrote scene 1's stranger again with a word changed, and its
    "Who are you?" exchange twice: on a small local model those paragraphs go."""
    ask = '"Who are you?" Edda asked in a hushed voice.'
    answer = f"{NEAR}\n\n{ask}\n\n{SENTENCE * 12}\n\n{ask}\n\n{OTHER * 12}"
    local = ScriptedModel().add("writer", Completion(text=answer, near_copies=True))
    prose, call = write.run(local, MESSAGES, max_tokens=700, min_words=100, earlier=SCENE_1)
    paragraphs = [p.strip() for p in prose.split("\n\n")]
    assert paragraphs == [ask, (SENTENCE * 12).strip(), (OTHER * 12).strip()]
    assert call.warning == "2 passages copied from the prompt or an earlier scene taken out"
    other = ScriptedModel().add("writer", Completion(text=answer))    # exact copies only
    kept = write.run(other, MESSAGES, max_tokens=700, min_words=100, earlier=SCENE_1)[0]
    assert [p.strip() for p in kept.split("\n\n")] == [p.strip() for p in answer.split("\n\n")]


def test_a_local_models_sentence_written_again_goes_from_a_paragraph_of_its_own():
    """The demo's scene 3 said again, inside a new paragraph, scene 2's "she needed to
    find someone who could help her ... before their loved one died"."""
    earlier = ("Edda knew that whatever had happened here was far too serious to ignore. Edda "
               "realized that she needed to find someone who could help her get home safely "
               "before their loved one died.")
    again = ("She knew that whatever had happened in the room was far too serious to ignore and "
             "needed to find someone who could help her get home safely before their loved one "
             "died.")
    answer = f"{SENTENCE * 12}{again} {OTHER * 12}"
    local = ScriptedModel().add("writer", Completion(text=answer, near_copies=True))
    prose, call = write.run(local, MESSAGES, max_tokens=700, min_words=100, earlier=earlier)
    assert "loved one died" not in prose and prose.count("Mara climbed") == 12
    assert prose.count("paraffin") == 12
    assert call.warning == "1 passage copied from the prompt or an earlier scene taken out"


def test_a_local_models_words_run_together_are_split_again():
    """DRY kept the demo's 1.5B from writing scene 1's "on this island" and "ring true"
    again: it wrote "onthis" and "ringtrue". Split where the prompt has the two words."""
    earlier = "Nothing on this island would ring true to her. The lighthouse stood alone."
    answer = f"{SENTENCE * 12}Her story did not ringtrue onthis island, by the lighthouse."
    local = ScriptedModel().add("writer", Completion(text=answer, near_copies=True))
    prose, call = write.run(local, MESSAGES, max_tokens=700, min_words=100, earlier=earlier)
    assert prose.endswith("Her story did not ring true on this island, by the lighthouse.")
    assert call.warning == "words run together split again: ringtrue, onthis"
    other = ScriptedModel().add("writer", Completion(text=answer))
    assert "ringtrue onthis" in write.run(other, MESSAGES, max_tokens=700, min_words=100,
                                          earlier=earlier)[0]


def test_a_scene_asked_for_again_that_stops_short_is_continued():
    """The demo's scene 2: asked once more not to copy, the 1.5B stopped at 171 words in
    mid-sentence; that answer goes on like a first one, to its scene_min_words."""
    copy = f"{NEAR}\n\n{NEAR}"
    short = SENTENCE * 8 + "Mr. Smith wrote several pages in a"
    rest = " neat hand. " + OTHER * 12
    model = (ScriptedModel().add("writer", Completion(text=copy, near_copies=True))
             .add("writer", Completion(text=short, near_copies=True))
             .add("writer", Completion(text=rest, near_copies=True)))
    prose, call = write.run(model, MESSAGES, max_tokens=700, min_words=150, earlier=SCENE_1)
    asked, again, more = model.calls("writer")
    assert more.messages[-2] == {"role": "assistant", "content": short}
    assert more.messages[-1]["content"] == write.CONTINUE
    assert more.messages[0]["content"].endswith(write.ANEW)
    assert "Mr. Smith wrote several pages in a neat hand." in prose and len(prose.split()) > 150


JOHNSON = "Mr. Johnson counted the money twice and locked the drawer of his desk. " * 20
LIGHTHOUSE = PLAN | {"pov": "Mara Quill", "characters": ["Mara Quill", "The Drowned Man"]}


def test_on_a_local_model_a_scene_with_none_of_its_people_is_written_again(project):
    """Issue 37: in one of two fresh demo runs scene 3 was about "Mr. Johnson", in none
    of the plan. On a local model a scene that names neither its POV nor a planned
    character is asked for once more, as a copied one is, and the tick says so."""
    from novel_agent.models.offline import OfflineModel
    from novel_agent.story.project.recovery import reconciled
    from novel_agent.tick.pipeline import tick
    from novel_agent.tick.session import Session

    model = (ScriptedModel().add("planner", LIGHTHOUSE).add("writer", JOHNSON)
             .add("writer", SENTENCE * 20))

    def make():
        model.otherwise = OfflineModel(seed=0)     # the extractor's answers
        return model

    with reconciled(project), Session.open(project, project.config(),
                                           make_model=make) as session:
        session.provider = LOCAL          # as an embedded model's session says
        result = tick(session)
    asked, again = model.calls("writer")
    assert again.messages[-1]["content"] == (
        f"{asked.messages[-1]['content']}\n\n" + write.STRAYED.format(
            cast="Mara Quill, The Drowned Man"))
    assert result.scene_path.read_text().split("---\n", 2)[2].strip() == (SENTENCE * 20).strip()
    assert ("the writer's scene named none of its people (Mara Quill, The Drowned Man): asked "
            "once more for the planned scene") in result.notices


def test_a_scene_with_none_of_its_people_twice_keeps_the_first_and_elsewhere_is_kept():
    cast = ["Mara Quill", "The Drowned Man"]
    model = ScriptedModel().add("writer", JOHNSON).add("writer", JOHNSON.replace("money", "coins"))
    prose, call = write.run(model, MESSAGES, max_tokens=700, short=True, cast=cast)
    assert prose == JOHNSON.strip() and len(model.calls("writer")) == 2
    assert call.warning.endswith("the second did not name them either, and the first stands")
    other = ScriptedModel().add("writer", JOHNSON)               # not a local model: as written
    assert write.run(other, MESSAGES, max_tokens=700, cast=cast)[0] == JOHNSON.strip()
    named = ScriptedModel().add("writer", "The drowned man's boots dried by the stove. " * 20)
    write.run(named, MESSAGES, max_tokens=700, short=True, cast=cast)    # a word of his name
    assert len(named.calls("writer")) == 1 and not write.strays("Quill sat.", cast)
