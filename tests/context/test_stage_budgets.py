"""Every stage's prompt, as sent, fits its budget: planner, writer, extractor, summarizer."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from novel_agent.config.layers import load_config
from novel_agent.context.briefing import propose_briefing
from novel_agent.context.builders import extractor_briefing, planner_briefing, summarizer_briefing
from novel_agent.context.engine import fit
from novel_agent.context.items import Item
from novel_agent.context.prompts import render_stage
from novel_agent.context.writer import Piece, WriterInputs, propose_writer
from novel_agent.errors import ContextOverflowError
from novel_agent.text.tokens import TokenCounter
from novel_agent.text.vocabulary import load_encoding
from tests.support import story_factory as sf

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


TIER3 = [Piece("arc_001", "### Scenes 1–40\n" + sf.prose(220, 8)),
         Piece("checkpoint_050", "### Scenes 41–50\n" + sf.prose(90, 9)),
         Piece("overall", "### In short (scenes 1–50)\n" + sf.prose(120, 10))]
LORE = [Item(f"lore_{n}", (f"The {w} lamp: " + sf.prose(40, n), f"The {w} lamp"), 1.0 + n,
             (n,)) for n, w in enumerate(("brass", "iron", "glass"))]


def propose(stage: str, memory, scenes: sf.SyntheticScenes, budget: int):
    briefing = briefing_of(stage, memory, scenes)
    if briefing is not None:
        return propose_briefing(briefing, COUNTER, budget)
    last = scenes.count
    inputs = WriterInputs(story=sf.story(), memory=memory, plan=sf.plan(last + 1),
                          last_tick=last, scene=scenes, tick=last + 1,
                          tier3=TIER3 if last > 50 else (), lore=LORE)
    return propose_writer(inputs, COUNTER, budget, CONFIG.context, CONFIG.generation)


# Memory sizes up to 5,000 characters, loops and relationships, the largest seldom drawn
# (a build at 5,000 of each takes about half a second).
SIZES = st.sampled_from([0, 1, 4, 30, 200, 1000, 5000])


@pytest.mark.parametrize("stage", STAGES)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(characters=SIZES, loops=SIZES, relationships=SIZES, scenes=st.integers(0, 300),
       words=st.integers(50, 3000), budget=st.sampled_from([400, 900, 2500, 7000, 30000]),
       seed=st.integers(0, 9))
@example(characters=5000, loops=5000, relationships=5000, scenes=300, words=400, budget=900,
         seed=1)
@example(characters=5000, loops=5000, relationships=5000, scenes=300, words=3000,
         budget=2500, seed=2)
def test_every_stage_prompt_as_sent_fits_its_budget(stage, characters, loops, relationships,
                                                    scenes, words, budget, seed):
    memory = sf.big_memory(characters, loops, relationships, relationships // 5, seed)
    story = sf.SyntheticScenes(scenes, lambda t: words, seed)
    propose_at = propose(stage, memory, story, budget)
    try:
        fitted = fit(propose_at, render_stage, COUNTER, budget,
                     CONFIG.context.compaction_thresholds)
    except ContextOverflowError as exc:
        assert exc.budget == budget and exc.tokens > 0
        assert budget <= 900, "only a tiny budget may be too small for the pinned parts"
        return
    assert as_sent(fitted.messages) == fitted.tokens <= budget
    if fitted.tokens < budget and not fitted.truncated and not fitted.dropped:
        # a section with items is never emptied while the prompt has room for its best
        # (the engine drops a section only while the prompt is over its budget; at the
        # leanest level the items are chosen within the room the pinned parts leave)
        offered = [s.name for s in propose_at(0).context.sections if s.text and not s.pinned]
        emptied = [n for n in offered if not fitted.context.text(n)]
        assert offered and all(no_room(fitted, n, budget - fitted.tokens) for n in emptied), (
            emptied, budget - fitted.tokens)


def no_room(fitted, section: str, left: int) -> bool:
    """Whether section `section` was left empty for want of room: each of its items was
    refused as over the room the prompt leaves (the notes that count those not listed
    aside), and the prompt leaves less than a heading, a header line and a bare item."""
    notes = [n for n in fitted.notes if n.section == section and not n.included and n.tokens]
    return bool(notes) and left < 48 and all(
        n.reason.startswith("over the room the prompt leaves") for n in notes)


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
