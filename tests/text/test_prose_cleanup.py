"""prose_cleanup: the scene without a small model's markdown, cut at a sentence."""

from __future__ import annotations

import pytest

from novel_agent.text.cleanup import (
    Cut,
    clean_scaffolding,
    cut_to_sentence,
    drop_copied,
    drop_instructions,
    sentences,
)

PROSE = ("Mara lit the lamp at dusk. The wind came off the water.\n\n"
         "***\n\n"
         "By morning the map was gone.")


def test_scaffolding_around_a_scene_is_removed_and_the_scene_kept():
    answer = ("```markdown\n"
              "# Scene 3: The Lamp\n"
              "Title: The Drowned Man's Map\n"
              "**The Lamp**\n"
              "---\n\n"
              f"{PROSE}\n\n"
              "| character | role |\n|---|---|\n| Mara | keeper |\n"
              "---\n"
              "Word count: 312\n"
              "```\n")
    assert clean_scaffolding(answer, title="The Drowned Man's Map") == PROSE


@pytest.mark.parametrize("leading", [
    "Scene 3:", "SCENE 3 — The Lamp", "Scene 12", "Chapter IV.", "## The Lamp",
    "Title: The Lamp", "*** ", "- - -", "POV: Mara", "The Drowned Man's Map",
    "**The Drowned Man's Map**", "The Keeper’s Map", "Scene 3 - The Lost Room",
    "Scene 1 continues...",   # the 1.5B, opening a story
])
def test_each_kind_of_leading_line_goes(leading):
    assert clean_scaffolding(f"{leading}\n\n{PROSE}", title="The Drowned Man's Map") == PROSE


@pytest.mark.parametrize("trailing", ["---", "(312 words)", "End of Scene 3.", "THE END",
                                      "Word count: 312", "___"])
def test_each_kind_of_trailing_line_goes(trailing):
    assert clean_scaffolding(f"{PROSE}\n\n{trailing}\n") == PROSE


def test_tool_notes_copied_after_the_scene_go_and_prose_of_loops_stays():
    notes = ("- Opened loop [the_sailor_appears_at_the_door]: An old sailor appears.\n"
             "- Closed loop [the_strangers_departure]: The strangers leave.\n\n"
             "- Opened loop [the_sailor_appears_at_the_door] — An old sailor appears.\n"
             "New character: Edda Lorn\nRelationship: Edda Lorn & Mara — rivals\n")
    assert clean_scaffolding(f"{PROSE}\n\n{notes}") == PROSE
    kept = f"{PROSE}\n\nShe opened the loop of rope. Relationship: a word she hated."
    assert clean_scaffolding(kept) == kept


@pytest.mark.parametrize("opening", ["Rain fell.", "Dawn came slowly", "\"Who are you?\"",
                                     "Edda Lorn woke, and the lamp was out"])
def test_a_first_line_of_prose_is_not_taken_for_a_title(opening):
    assert clean_scaffolding(f"{opening}\n\n{PROSE}") == f"{opening}\n\n{PROSE}"


def test_prose_that_looks_like_a_label_is_kept():
    text = ("Part of her wanted to run.\n\nScene after scene, the tide returned.\n\n"
            "The Drowned Man's Map was a lie, she said.")
    assert clean_scaffolding(text, title="The Drowned Man's Map") == text
    assert clean_scaffolding("Mara looked up. **Run,** she thought.") == \
        "Mara looked up. **Run,** she thought."


def test_blank_runs_collapse_and_a_scene_break_inside_stays():
    assert clean_scaffolding("One.\n\n\n\n***\n\n\n\nTwo.") == "One.\n\n***\n\nTwo."
    assert clean_scaffolding("---\n---\n") == ""


def test_cut_keeps_the_last_complete_sentence_within_the_limit():
    text = "She ran. He hid in the dark. They waited for the tide to turn again."
    assert cut_to_sentence(text, 8) == Cut("She ran. He hid in the dark.", False)
    assert cut_to_sentence(text, 7) == Cut("She ran. He hid in the dark.", False)
    assert cut_to_sentence(text, 6) == Cut("She ran.", False)
    assert cut_to_sentence(text, 100) == Cut(text, False)
    assert cut_to_sentence(text, 15) == Cut(text, False)
    assert cut_to_sentence(text, 14) == Cut("She ran. He hid in the dark.", False)


def test_cut_sees_quotes_questions_and_keeps_paragraphs():
    text = '"Who is there?" Mara asked.\n\n"Nobody!" The door shut behind him and'
    assert cut_to_sentence(text, 6).text == '"Who is there?" Mara asked.\n\n"Nobody!"'
    assert cut_to_sentence(text, 3) == Cut('"Who is there?"', False)


def test_abbreviations_and_initials_do_not_end_a_sentence():
    text = "Dr. Thorne met J. Vance at St. Brigid's well and they talked for hours"
    assert cut_to_sentence(text, 5) == Cut("Dr. Thorne met J. Vance", True)
    text = "She met Dr. Thorne. Then Mr. Vance came in and sat down"
    assert cut_to_sentence(text, 7) == Cut("She met Dr. Thorne.", False)


def test_no_sentence_end_cuts_at_a_word_boundary_and_says_so():
    text = "the tide kept rising over the harbour wall without a pause"
    cut = cut_to_sentence(text, 4)
    assert cut == Cut("the tide kept rising", True)
    assert cut.mid_sentence
    assert cut_to_sentence("Unbelievably-long-hyphenated-word and more", 1) == \
        Cut("Unbelievably-long-hyphenated-word", True)
    with pytest.raises(ValueError):
        cut_to_sentence(text, 0)


def test_sentences_split_at_ends_not_at_abbreviations_or_quoted_speech():
    text = "Dr. Vane ran. “Stop!” she said. A. B. Smith came? Yes… He hid"
    assert sentences(text) == ["Dr. Vane ran.", "“Stop!” she said.", "A. B. Smith came?",
                               "Yes…", "He hid"]


def test_a_stand_in_summary_takes_the_first_two_sentences_and_the_last_clipped():
    from novel_agent.tick.stages.extract import from_prose
    long = " ".join(["word"] * 60) + "."
    got = from_prose(f"{long} Mara wept at dawn. The keeper slept at last. The sea rose.").summary
    assert got[0] == " ".join(["word"] * 40) + " …"
    assert got[1:] == ["Mara wept at dawn.", "The sea rose."]
    assert from_prose("12 34 56").summary == ["12 34 56"]    # nothing like prose: kept as is


def test_copied_paragraphs_go_short_ones_and_new_ones_stay():
    prompt = ("## The last scenes in full\n"
              "The sea was grey and cold, and every boat in the harbour was out.\n\nYes.")
    text = ("THE SEA WAS GREY   AND COLD, and every boat in the harbour was out.\n\nYes.\n\n"
            "The sea was grey and cold, and Edda rowed out alone past the mole to the buoy.")
    assert drop_copied(text, prompt) == ("Yes.\n\nThe sea was grey and cold, and Edda rowed "
                                         "out alone past the mole to the buoy.", 1)
    # half its word runs again, with a word changed here and there: a retelling (0.57)
    again = "The sea was grey and cold, and one boat in the harbour was still tied up."
    assert drop_copied(again, prompt) == ("", 1)
    assert drop_copied(prompt.split("\n", 1)[1], prompt) == ("Yes.", 1)


def test_a_sentence_about_the_scene_or_the_premise_goes_and_the_prose_around_it_stays():
    # the 1.5B's last scene of a book, told the scene resolves the premise
    answer = ("Edda climbed the stair to the lamp room.\n\nShe opened the door. In this "
              "scene 10 ends as Edda returns to Skerry Light, resolving the premise by "
              "returning with her daughter.\n\nThis scene ends the book.")
    assert clean_scaffolding(answer) == "Edda climbed the stair to the lamp room.\n\nShe opened the door."
    prose = "The scene at the quay was worse than she feared. Nobody spoke of it."
    assert clean_scaffolding(prose) == prose          # "the scene" in the story stays


# -- issue 51, item 4: the writer's instructions said again in the prose ------------------

def test_a_sentence_that_talks_about_the_story_goes_and_what_follows_its_colon_stays():
    # the embedded model's scenes on a second premise, and on the glassblowers' book
    answer = ("The story continued as follows in a more detailed and vivid manner:\n\n"
              "Ines set the apple on the bench. It was the same man from scene 6 in scene 5! "
              "He did not look at her.\n\nThe story continued as follows: Ines ran.\n\n"
              "As in the previous scene, the kiln was cold.")
    assert clean_scaffolding(answer) == ("Ines set the apple on the bench. He did not look at "
                                         "her.\n\nInes ran.")


@pytest.mark.parametrize("prose", [
    "The story continued to spread through the town, and by nightfall everyone knew it.",
    "Her story went on for an hour; nobody interrupted.",
    "He described the scene at the quay as follows, slowly and with care.",
    "The next morning the scene at the kiln was quiet.",
])
def test_the_story_in_the_story_stays(prose):
    assert clean_scaffolding(prose) == prose


WRITER = ("You are the writer of a serialized novel. Write the next scene as vivid, concrete "
          "prose, keeping the voice, facts and continuity of what came before. Write only the "
          "scene's paragraphs: no title, labels, lists or notes.\n## Scene 9, \"\n—\n\"\n"
          "Go on from where scene 8 ended, with what happens next; do not tell the earlier "
          "scenes again.\nThis is the book's last scene: it ends the story, resolving the "
          "premise: \n—\n Close it; leave no question open.\nWrite scene 9 now, 300 to 600 "
          "words of prose.")


def test_a_sentence_that_says_an_instruction_again_goes():
    # "Close this scene; leave no question open." ended a scene of the embedded model's
    text = ("Ines lifted the last apple from the shelf.\n\nShe held it to the light. Close this "
            "scene; leave no question open.\n\nKeep the voice, facts and continuity of what "
            "came before.")
    assert drop_instructions(text, WRITER) == (
        "Ines lifted the last apple from the shelf.\n\nShe held it to the light.",
        ["Close this scene; leave no question open.",
         "Keep the voice, facts and continuity of what came before."])


@pytest.mark.parametrize("prose", [
    '"Do not tell them what happens next," she said.',       # a line of dialogue
    "She did not tell him what happens next.",
    "She would bring it to an end within a few days.",
    "She wrote the next letter in plain words, without a title.",
    "It was the last scene she would ever see from that window.",
    "The apples kept the voices of the vanished.",
    "Leave it.",
])
def test_prose_near_the_instructions_stays(prose):
    assert drop_instructions(prose, WRITER) == (prose, [])
