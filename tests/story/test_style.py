"""style.yaml: learned from a sample with known answers, written for people, read back
with every key checked, and told to the writer in a few lines."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from novel_agent.errors import FileFormatError
from novel_agent.story.style import (
    check_style,
    learn,
    pick_sample,
    read_style,
    style_lines,
    style_text,
)

# First person, present tense, short sentences, about half of it said aloud.
SAMPLE = ["""I walk down to the quay. The boats knock together in the swell. "You're late," \
Tobin says. "The tide won't wait for you."

I hand him the ledger. He reads it by the lamp and says nothing for a while. The harbour \
smells of tar and salt.

"Is it all here?" I ask him.

"All of it," he says. "Every name, every debt, every ferry crossing since the storm." He \
closes the ledger and holds it against his chest like a child.""",
          """The lamp gutters. I count the boats again, the ledger's boats, the harbour's \
boats. "Where is the ninth?" I ask. Tobin looks at the water and does not answer me."""]


def test_a_sample_is_learned_as_its_measures_say():
    style = learn(SAMPLE)
    assert (style["person"], style["tense"]) == ("first", "present")
    assert list(style) == ["person", "tense", "sentence_mean", "sentence_sd", "paragraph_mean",
                           "dialogue_share", "mtld", "punctuation", "distinctive", "avoid",
                           "sample", "function_words"]
    assert 5 < style["sentence_mean"] < 12 and 0.2 < style["dialogue_share"] < 0.6
    assert style["punctuation"]["question"] > 0
    assert "ledger" in style["distinctive"] and "boats" in style["distinctive"]
    assert "says" not in style["distinctive"]          # words any story says
    assert style["avoid"] == [] and '"Is it all here?" I ask him.' in style["sample"]


def test_the_sample_is_a_passage_of_dialogue_and_narration_within_its_size():
    passage = pick_sample(SAMPLE, (30, 80))
    assert 30 <= len(passage.split()) <= 80
    assert '"' in passage and "\n\n" in passage
    assert pick_sample(["One short line."], (30, 80)) == "One short line."


def test_style_yaml_is_commented_and_reads_back_as_written(tmp_path):
    style = learn(SAMPLE, avoid=["the tide waits for no one"])
    text = style_text(style, ["mine.md"], 123)
    assert text.startswith("# The book's style, measured by `novel style learn` from mine.md\n"
                           "# (123 words).")
    assert "\nperson: first    # first, second or third: who tells the story\n" in text
    assert "\nsample: |-\n  I walk down" in text or "\nsample: |-\n  " in text
    (tmp_path / "style.yaml").write_text(text)
    assert read_style(tmp_path) == style
    assert read_style(tmp_path / "nowhere") is None


@pytest.mark.parametrize("text, line, says", [
    ("person: third\ntense: future\n", 2, "'tense' must be past or present"),
    ("dialogue_share: 1.5\n", 1, "'dialogue_share' must be a share from 0 to 1"),
    ("sentence_mean: long\n", 1, "'sentence_mean' must be a number"),
    ("avoid: a sense of unease\n", 1, "'avoid' must be a list of text"),
    ("punctuation:\n  comma: 3\n  pilcrow: 2\n", 3, "'punctuation.pilcrow' must be a number "
     "per 1,000 words of one of comma"),
    ("tence: past\n", 1, "unknown key 'tence'"),
    ("- third\n", 1, "expected a mapping"),
])
def test_a_broken_style_is_one_line_naming_the_file_the_line_and_the_key(tmp_path, text, line,
                                                                          says):
    path = tmp_path / "style.yaml"
    path.write_text(text)
    with pytest.raises(FileFormatError) as info:
        read_style(tmp_path)
    message = str(info.value)
    assert message.startswith(f"{path}:{line}: ") and says in message and "\n" not in message


def test_the_writer_is_told_a_few_lines_of_what_the_style_says():
    style = {"person": "first", "tense": "present", "sentence_mean": 9.4, "sentence_sd": 4.2,
             "paragraph_mean": 38, "dialogue_share": 0.33, "distinctive": ["ledger", "tide"],
             "punctuation": {"comma": 40}}
    assert style_lines(style) == [
        "Tell it in the first person, present tense.",
        "Sentences of about 9 words, most between 5 and 14.",
        "Paragraphs of about 38 words.",
        "Dialogue: about a third of the words.",
        "Words to favour: ledger, tide."]
    assert style_lines({"tense": "past"}) == ["Tell it in the past tense."]
    assert style_lines(check_style(yaml.safe_load("avoid: [x]"), Path("style.yaml"))) == []
