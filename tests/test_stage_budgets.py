"""Every stage's prompt, as sent, fits its budget: planner, writer, extractor, summarizer."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from novel_agent.config import load_config
from novel_agent.context.briefing import propose_briefing
from novel_agent.context.builders import extractor_briefing, planner_briefing, summarizer_briefing
from novel_agent.context.engine import fit
from novel_agent.context.writer import WriterInputs, propose_writer
from novel_agent.errors import ContextOverflowError
from novel_agent.prompts import render_stage
from novel_agent.tokens import TokenCounter
from novel_agent.vocabulary import load_encoding

import story_factory as sf

COUNTER = TokenCounter("gpt-4o")
ENC = load_encoding("o200k_base")
CONFIG = load_config()
STAGES = ("planner", "writer", "extractor", "summarizer")


def as_sent(messages) -> int:
    """The request's tokens counted by tiktoken itself, per OpenAI's cookbook rule."""
    return 3 + sum(3 + len(ENC.encode(m["role"])) + len(ENC.encode(m["content"]))
                   for m in messages)


def briefing_of(stage: str, memory, scenes: sf.SyntheticScenes):
    """The planner's, extractor's or summarizer's briefing (None for the writer)."""
    last = scenes.count
    recent = [s for s in (scenes(t) for t in range(max(1, last - 2), last + 1)) if s]
    ctx = CONFIG.context
    if stage == "planner":
        return planner_briefing(sf.story(), memory, recent, tick=last + 1,
                                shares=ctx.planner_shares, overall_summary=sf.prose(300, 4))
    if stage == "extractor":
        return extractor_briefing(sf.story(), memory, sf.plan(last + 1), sf.prose(600, 5),
                                  tick=last + 1, shares=ctx.extractor_shares)
    if stage == "summarizer":
        return summarizer_briefing(sf.story(), recent, first=max(1, last - 2), last=last,
                                   shares=ctx.summarizer_shares, previous=sf.prose(200, 6))
    return None


def propose(stage: str, memory, scenes: sf.SyntheticScenes, budget: int):
    last = scenes.count
    recent = [s for s in (scenes(t) for t in range(max(1, last - 2), last + 1)) if s]
    ctx = CONFIG.context
    if stage == "planner":
        briefing = planner_briefing(sf.story(), memory, recent, tick=last + 1,
                                    shares=ctx.planner_shares, overall_summary=sf.prose(300, 4))
    elif stage == "extractor":
        briefing = extractor_briefing(sf.story(), memory, sf.plan(last + 1), sf.prose(600, 5),
                                      tick=last + 1, shares=ctx.extractor_shares)
    elif stage == "summarizer":
        briefing = summarizer_briefing(sf.story(), recent, first=max(1, last - 2), last=last,
                                       shares=ctx.summarizer_shares, previous=sf.prose(200, 6))
    else:
        inputs = WriterInputs(story=sf.story(), memory=memory, plan=sf.plan(last + 1),
                              last_tick=last, scene=scenes, tick=last + 1)
        return propose_writer(inputs, COUNTER, budget, ctx, CONFIG.generation)
    return propose_briefing(briefing, COUNTER, budget)


@pytest.mark.parametrize("stage", STAGES)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(size=st.integers(0, 5000), scenes=st.integers(0, 300), words=st.integers(50, 3000),
       budget=st.sampled_from([400, 900, 2500, 7000, 30000]), seed=st.integers(0, 9))
def test_every_stage_prompt_as_sent_fits_its_budget(stage, size, scenes, words, budget, seed):
    memory = sf.big_memory(size // 10, size // 10, size, size // 5, seed)
    story = sf.SyntheticScenes(scenes, lambda t: words, seed)
    try:
        fitted = fit(propose(stage, memory, story, budget), render_stage, COUNTER, budget,
                     CONFIG.context.compaction_thresholds)
    except ContextOverflowError as exc:
        assert exc.budget == budget and exc.tokens > 0
        assert budget <= 900, "only a tiny budget may be too small for the pinned parts"
        return
    assert as_sent(fitted.messages) == fitted.tokens <= budget
    briefing = briefing_of(stage, memory, story)
    if briefing is not None and fitted.tokens < budget and not fitted.truncated:
        for pool in briefing.pools:
            if pool.items:    # a section with items is never emptied while there is room
                assert fitted.context.text(pool.name), pool.name


def test_a_huge_memory_at_8k_still_briefs_the_planner_on_what_matters():
    memory = sf.big_memory(200, 500, 2000, 0, seed=3)
    for number, loop in enumerate(memory.loops):
        loop["opened_in"] = 280 + number % 20            # recent, not overdue ...
    late = [l for l in memory.loops if l["status"] == "open"][:2]
    for loop in late:
        loop["opened_in"] = 5                            # ... but these two
    memory.relationships.append({"a": "Mara Quill", "b": "Tobin Keel", "kind": "siblings",
                                 "description": "they share a secret", "since": 3})
    scenes = sf.SyntheticScenes(300, lambda t: 350)
    config = load_config(flags={"context.window": 8192})
    budget = 8192 - config.llm.planner_max_tokens - config.context.margin
    briefing = briefing_of("planner", memory, scenes)
    fitted = fit(propose_briefing(briefing, COUNTER, budget), render_stage, COUNTER, budget,
                 config.context.compaction_thresholds)
    prompt = fitted.messages[-1]["content"]
    assert fitted.tokens <= budget
    assert sf.prose(300, 4)[:200] in prompt                           # the story so far
    assert "Mara Quill — the keeper (traits: stubborn" in prompt        # the POV's card
    assert "Mara Quill & Tobin Keel: siblings — they share a secret" in prompt
    for loop in late:
        assert f"[{loop['id']}] {loop['description']}" in prompt and "OVERDUE" in prompt
    loops = fitted.context.section("loops").items
    assert loops and len(loops) <= 12 and len(fitted.context.section("relationships").items) <= 12
