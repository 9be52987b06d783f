"""The writer shown the newest scene's ending, not whole scenes (context.full_text):
what an embedded small model gets, since it writes whole scenes it is shown again."""

from __future__ import annotations

import pytest

from novel_agent.config.layers import load_config
from novel_agent.context.builders import ENDING_WORDS, scene_ending
from novel_agent.context.engine import fit
from novel_agent.context.prompts import render_stage
from novel_agent.context.writer import WriterInputs, propose_writer
from novel_agent.errors import ConfigError
from novel_agent.models.offline import OfflineModel
from novel_agent.models.providers import LOCAL
from novel_agent.story.scenes import Scene
from novel_agent.text.tokens import TokenCounter
from novel_agent.tick.session import Session
from tests.support import story_factory as sf
from tests.support.ticking import run_ticks

COUNTER = TokenCounter("gpt-4o")


def scene(*paragraphs: str, tick: int = 4) -> Scene:
    return Scene(tick=tick, body="\n\n".join(paragraphs), title="The Lamp Room")


def test_the_ending_is_the_last_whole_paragraphs_of_about_its_words():
    first, middle, last = ("One two three. " * 20).strip(), ("Four five. " * 25).strip(), \
        "She shut the lamp room door behind her."
    text = scene(first, middle, last).body
    ending = scene_ending(scene(first, middle, last), words=50)
    assert ending.startswith("### Scene 4 — The Lamp Room, its ending\n\n… Four five.")
    assert ending.endswith(last) and first not in ending
    assert len(ending.split()) < len(text.split())
    whole = scene_ending(scene("A short scene.", last), words=50)   # all of it: no ellipsis
    assert whole.endswith("A short scene.\n\n" + last) and "…" not in whole


def test_a_long_last_paragraph_gives_its_last_sentences():
    sentences = [f"Sentence {i} of the long paragraph goes on a while." for i in range(40)]
    ending = scene_ending(scene("Before.", " ".join(sentences)))
    kept = ending.split("\n\n", 1)[1]
    assert kept.startswith("… Sentence") and kept.endswith(sentences[-1])
    assert ENDING_WORDS <= len(kept.split()) <= ENDING_WORDS + 12
    assert "Before." not in ending


def build(scenes, *, ending: bool, state=None, budget=12000):
    config = load_config()
    last = scenes.count
    inputs = WriterInputs(story=sf.story(), memory=sf.memory(), plan=sf.plan(last + 1),
                          last_tick=last, scene=scenes, tick=last + 1, state=state or {},
                          ending=ending)
    propose = propose_writer(inputs, COUNTER, budget, config.context, config.generation)
    return fit(propose, lambda c: render_stage(c), COUNTER, budget,
               config.context.compaction_thresholds)


def test_tier1_holds_only_the_newest_scenes_ending_and_the_brief_says_go_on():
    scenes = sf.SyntheticScenes(6, lambda t: 300)
    whole = build(scenes, ending=False)
    assert len(whole.context.section("recent_full").items) > 1      # the default: whole scenes
    fitted = build(scenes, ending=True)
    section = fitted.context.section("recent_full")
    assert section.items == ("scene_006",) and section.title == "How the last scene ended"
    assert scene_ending(scenes(6)) in section.text and scenes(6).body not in section.text
    summarized = fitted.context.section("recent_summaries").items
    assert summarized[-1] == "scene_005" and set(whole.context.section("recent_full").items[:-1]) \
        <= set(summarized)
    prompt = fitted.messages[-1]["content"]
    assert "Go on from where scene 6 ended, with what happens next" in prompt
    assert "Go on from" not in whole.messages[-1]["content"]
    assert not any(scenes(t).body in prompt for t in range(1, 7))   # no scene whole


def test_with_the_ending_consecutive_prompts_share_all_but_their_tail():
    state, previous, kept, moves = {}, None, 0, 0
    for last in range(3, 25):
        fitted = build(sf.SyntheticScenes(last, lambda t: 250 + (t * 37) % 200), ending=True,
                       state=state)
        state = fitted.state
        assert fitted.context.section("recent_full").items == (f"scene_{last:03d}",)
        prompt = fitted.messages[-1]["content"]
        if previous is not None:      # all up to the end of tier 2 again, but where it compacts
            head = previous[:previous.index("## How the last scene ended")]
            kept += prompt.startswith(head)
            moves += not prompt.startswith(head)
        previous = prompt
    assert kept >= 18 and moves <= 3


def test_auto_means_the_ending_on_an_embedded_local_model_only(project, monkeypatch):
    def session(**flags):
        config = project.config(flags=flags)
        return Session.open(project, config, make_model=lambda: OfflineModel())
    with session() as offline:
        assert not offline.ending
    with session(**{"context.full_text": "ending"}) as asked:
        assert asked.ending
    with session() as local:
        monkeypatch.setattr(local, "provider", LOCAL)
        assert local.ending
        local.config = project.config(flags={"context.full_text": "scenes"})
        assert not local.ending


def test_a_tick_with_the_ending_writes_its_prompt_so(project):
    run_ticks(project, 2)
    project_yaml = project.root / "project.yaml"
    project_yaml.write_text(project_yaml.read_text() + "context:\n  full_text: ending\n")
    run_ticks(project, 1)
    import json
    log = json.loads((project.root / ".novel" / "log" / "tick_003_writer.json").read_text())
    prompt = log["messages"][-1]["content"]
    assert "## How the last scene ended\n### Scene 2" in prompt and ", its ending" in prompt
    assert "## The last scenes in full" not in prompt
    assert "Go on from where scene 2 ended" in prompt


def test_an_unknown_full_text_is_an_error_naming_the_key():
    with pytest.raises(ConfigError) as info:
        load_config(flags={"context.full_text": "paragraphs"})
    assert "context.full_text: must be one of auto, scenes, ending, not 'paragraphs'" \
        in str(info.value)
