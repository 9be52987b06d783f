"""The writer sees the voice cards of the characters in the scene, once, within the cast's
share (context.cast_share) which they share with the lore, and leaner as it runs short."""

from __future__ import annotations

from novel_agent.config.layers import load_config
from novel_agent.context.engine import fit
from novel_agent.context.items import Item
from novel_agent.context.prompts import render_stage
from novel_agent.context.voice import voice_items
from novel_agent.context.writer import WriterInputs, propose_writer
from novel_agent.story.decisions import Plan
from novel_agent.text.tokens import TokenCounter
from tests.support import story_factory as sf

COUNTER = TokenCounter("gpt-4o")
MARA = {"by": "author", "diction": "clipped, nautical words", "habits": "answers with a question",
        "tics": ["mark me", "aye"], "never": ["okay"]}
TOBIN = {"tics": ["right then"]}


def memory():
    m = sf.memory()
    m.characters["mara_quill"]["voice"] = MARA
    m.characters["tobin_keel"]["voice"] = TOBIN
    m.characters["ilse"] = {"id": "ilse", "name": "Ilse Varga", "voice": {"tics": ["my dear"]}}
    return m


def build(budget=16000, lore=(), plan=None, **flags):
    config = load_config(flags={f"context.{k}": v for k, v in flags.items()})
    scenes = sf.SyntheticScenes(4, lambda t: 120)
    m = memory()
    plan = plan or sf.plan(5)
    inputs = WriterInputs(story=sf.story(), memory=m, plan=plan, last_tick=4, scene=scenes,
                          tick=5, lore=lore, voices=voice_items(m, plan))
    propose = propose_writer(inputs, COUNTER, budget, config.context, config.generation)
    return fit(propose, render_stage, COUNTER, budget, config.context.compaction_thresholds)


def test_the_cards_of_those_present_go_in_once_and_no_one_elses():
    fitted = build()
    prompt = fitted.messages[-1]["content"]
    assert ('## How they speak\nMara Quill: clipped, nautical words; answers with a question\n'
            '  says "mark me", "aye"; never says "okay"\nTobin Keel: says "right then"\n') \
        in prompt
    assert prompt.count('"mark me"') == 1 and "my dear" not in prompt   # Ilse is not there
    assert fitted.context.section("voices").items == ("voice:mara_quill", "voice:tobin_keel")
    # after the lore, in the tail: a scene's cast does not move the stable prefix
    assert prompt.index("## How they speak") > prompt.index("## The last scenes in full")


def test_a_name_said_twice_or_as_an_alias_is_one_card():
    plan = Plan(intention="x", pov="Mara Quill", location="The harbour",
                characters=["Mara Quill", "Mara", "Tobin Keel"])
    prompt = build(plan=plan).messages[-1]["content"]
    assert prompt.count('"mark me"') == 1


def test_the_cards_share_the_cast_budget_with_the_lore_and_go_leaner_before_it_is_passed():
    lore = [Item(f"lore:{i}", (sf.prose(60, i),), 1.0, (i,)) for i in range(6)]
    budget = 16000
    roomy = build(budget, lore, cast_share=0.06)
    cap = int(budget * 0.06)
    used = sum(n.tokens for n in roomy.notes if n.included and n.section in ("voices", "lore"))
    assert used <= cap
    assert len(roomy.context.section("voices").items) == 2
    tight = build(budget, lore, cast_share=0.0016)       # 25 tokens: one line, the POV's
    voices = tight.context.section("voices")
    assert voices.text == 'Mara Quill: says "mark me", "aye"; never says "okay"'
    assert [n.key for n in tight.notes if n.section == "voices" and not n.included] == \
        ["voice:tobin_keel"]
    assert len(tight.context.section("lore").items) == 1    # the lore kept to its best one
