"""Voice cards in a character's memory file: checked when read, proposed by the extractor
only where the author wrote none, shown to the writer in a few short lines."""

from __future__ import annotations

import pytest

from novel_agent.errors import FileFormatError
from novel_agent.story.memory.read import load_memory
from novel_agent.story.memory.voices import (
    EXTRACTOR,
    authored,
    card,
    card_line,
    card_lines,
    proposed,
    take_proposal,
    wants_card,
)


@pytest.mark.parametrize("text, line, says", [
    ("name: Mara\nvoice:\n  diction: plain\n  tics: 3\n", 4,
     "'voice.tics' must be a list of text"),
    ("name: Mara\nvoice:\n  by: me\n", 3, "'voice.by' must be author or extractor"),
    ("name: Mara\nvoice:\n  accent: thick\n", 3, "'voice.accent' must be one of diction"),
    ("name: Mara\nvoice: gruff\n", 2, "'voice' must be a mapping of diction"),
])
def test_a_broken_hand_edited_card_is_one_line_naming_the_file_and_the_key(tmp_path, text,
                                                                          line, says):
    path = tmp_path / "characters" / "mara.yaml"
    path.parent.mkdir()
    path.write_text(text)
    with pytest.raises(FileFormatError) as info:
        load_memory(tmp_path)
    message = str(info.value)
    assert message.startswith(f"{path}:{line}: ") and says in message and "\n" not in message


def test_a_hand_written_card_is_the_authors_and_never_changed(tmp_path):
    path = tmp_path / "characters" / "mara.yaml"
    path.parent.mkdir()
    path.write_text("name: Mara\nvoice:\n  tics: [mark me]\n")
    mara = load_memory(tmp_path).characters["mara"]
    assert authored(mara) and not wants_card(mara)     # thin, but the author's
    assert take_proposal(mara, {"diction": "salty", "never": ["okay"]}) == []
    assert mara["voice"] == {"tics": ["mark me"]}


def test_a_proposal_makes_a_card_then_fills_in_only_what_a_thin_one_lacks():
    tobin = {"id": "tobin", "name": "Tobin"}
    assert wants_card(tobin)
    assert take_proposal(tobin, {"tics": ["right then", "right then", "  "]}) == ["tics"]
    assert tobin["voice"] == {"by": EXTRACTOR, "tics": ["right then"]}
    assert wants_card(tobin)                            # one field: thin
    added = take_proposal(tobin, {"diction": "a clerk's careful words", "tics": ["indeed"],
                                  "never": "swears"})
    assert added == ["diction", "never"]
    assert tobin["voice"] == {"by": EXTRACTOR, "diction": "a clerk's careful words",
                              "tics": ["right then"], "never": ["swears"]}
    assert not wants_card(tobin)
    assert take_proposal(tobin, {"habits": "long sentences"}) == []


def test_a_card_is_shown_in_two_short_lines_or_one():
    voice = card({"voice": {"diction": "clipped", "habits": "answers with a question",
                            "tics": ["mark me", "aye"], "never": ["okay"]}})
    assert card_lines("Mara", voice) == ('Mara: clipped; answers with a question\n'
                                         '  says "mark me", "aye"; never says "okay"')
    assert card_line("Mara", voice) == 'Mara: says "mark me", "aye"; never says "okay"'
    assert card_lines("Ilse", {"never": ["sorry"]}) == 'Ilse: never says "sorry"'
    assert card_line("Ilse", {"habits": "long pauses"}) == "Ilse: long pauses"
    assert card({"voice": {"diction": "  ", "tics": []}}) == {}


def test_a_proposed_tic_that_tells_of_the_speech_is_left_out():
    card = proposed({"diction": "professional", "habits": "meticulous",
                            "tics": ["Always uses precise language", "Stranger often uses the phrase",
                                     "‘I can’t believe it’", "aye"],
                            "never": ["The stranger never says", '"sorry"', "“say what you like”"]})
    assert card == {"diction": "professional", "habits": "meticulous",
                    "tics": ["I can’t believe it", "aye"],
                    "never": ["sorry", "say what you like"]}     # quoted: words said
    assert "tics" not in proposed({"tics": ["uses long words"]})
