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
