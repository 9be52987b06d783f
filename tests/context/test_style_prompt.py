"""The writer is told the book's style (style.yaml) in a few lines and its sample passage,
once, after the story bible in the prompt's stable prefix, within context.style_share."""

from __future__ import annotations

import pytest

from novel_agent.config.layers import load_config
from novel_agent.context.engine import fit
from novel_agent.context.prompts import render_stage
from novel_agent.context.stable import first_user, stable_prefix
from novel_agent.context.voice import SAMPLE_HEAD, SAMPLE_SHORT, style_items
from novel_agent.context.writer import WriterInputs, propose_writer
from novel_agent.errors import FileFormatError
from novel_agent.text.cleanup import cut_to_sentence
from novel_agent.text.tokens import TokenCounter
from tests.support import story_factory as sf
from tests.support.scripted import ScriptedModel
from tests.support.ticking import run_ticks

COUNTER = TokenCounter("gpt-4o")
SAMPLE = ('I walk down to the quay. The boats knock together. "You are late," Tobin says. '
          '"The tide does not wait." I hand him the ledger and he reads it by the lamp. The '
          'harbour smells of tar. "All of it," he says at last. "Every name, every debt."\n\n'
          'The lamp gutters. I count the boats again, the ledger boats and the harbour boats, '
          'and come to eight. "Where is the ninth?" I ask him. Tobin looks at the water and '
          'does not answer me.')
STYLE = {"person": "first", "tense": "present", "sentence_mean": 7.2, "sentence_sd": 3.1,
         "dialogue_share": 0.3, "distinctive": ["ledger", "quay"], "sample": SAMPLE}
LINES = ("Tell it in the first person, present tense.\n"
         "Sentences of about 7 words, most between 4 and 10.\n"
         "Dialogue: about a third of the words.\nWords to favour: ledger, quay.")


def build(budget=16000, style=STYLE, **flags):
    config = load_config(flags={f"context.{k}": v for k, v in flags.items()})
    inputs = WriterInputs(story=sf.story(), memory=sf.memory(), plan=sf.plan(5), last_tick=4,
                          scene=sf.SyntheticScenes(4, lambda t: 150), tick=5,
                          style=style_items(style))
    propose = propose_writer(inputs, COUNTER, budget, config.context, config.generation)
    return fit(propose, render_stage, COUNTER, budget, config.context.compaction_thresholds)


def test_the_style_lines_and_sample_come_once_after_the_bible_in_the_stable_prefix():
    fitted = build()
    prompt = first_user(fitted.messages)
    told = f"## The book's style\n{LINES}\n\n{SAMPLE_HEAD}\n{SAMPLE}\n"
    assert prompt.count(told) == 1 and prompt.count("Tell it in the first person") == 1
    assert prompt.index("## Story bible") < prompt.index(told) < prompt.index("## Who and where")
    assert stable_prefix(fitted.context, render_stage) > prompt.index(told) + len(told)


def test_within_its_share_the_sample_is_cut_then_left_out_and_the_lines_always_stay():
    lines = COUNTER.count(LINES)
    cut = build(style_share=(lines + 90) / 16000).context.text("style")
    assert cut == f"{LINES}\n\n{SAMPLE_HEAD}\n{cut_to_sentence(SAMPLE, SAMPLE_SHORT).text}"
    assert cut.endswith('"Every name, every debt."') and "ninth" not in cut
    bare = build(style_share=(lines + 5) / 16000)
    assert bare.context.text("style") == LINES
    assert [n.key for n in bare.notes if n.section == "style" and not n.included] == \
        ["style:sample"]
    assert build(style_share=0).context.text("style") == ""


def test_without_a_style_there_is_no_section():
    assert build(style=None).context.text("style") == ""
    assert "## The book's style" not in first_user(build(style={}).messages)


def test_a_broken_style_stops_the_tick_before_any_model_is_asked(project):
    (project.root / "style.yaml").write_text("person: third\ntense: later\n")
    model = ScriptedModel()          # nothing queued: any call would fail the test
    with pytest.raises(FileFormatError) as info:
        run_ticks(project, 1, model)
    assert str(info.value) == (f"{project.root / 'style.yaml'}:2: 'tense' must be past or "
                               "present: fix the value or remove the line")
    assert model.requests == [] and project.tick() == 0
