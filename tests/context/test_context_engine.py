"""The context engine: budgets never exceeded, pinned parts kept, order fixed, tiers."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from novel_agent.config.layers import load_config
from novel_agent.context.engine import fit
from novel_agent.context.items import Item
from novel_agent.context.prompts import render_stage
from novel_agent.context.writer import WRITER_ORDER, Piece, WriterInputs, propose_writer
from novel_agent.errors import ContextOverflowError
from novel_agent.text.tokens import TokenCounter
from novel_agent.text.vocabulary import load_encoding
from tests.support import story_factory as sf

COUNTER = TokenCounter("gpt-4o")
ENC = load_encoding("o200k_base")
TITLES = {"bible": "Story bible", "tier3": "The story so far", "cast": "Who and where",
          "retrieved": "Earlier scenes that matter now",
          "recent_summaries": "Earlier scenes (summaries)",
          "recent_full": "The last scenes in full", "tools": "Notes from the planner's tools",
          "intention": "This scene", "steer": "Author's note"}


def tiktoken_count(messages) -> int:
    """What tiktoken says of the request, counted independently of TokenCounter."""
    return 3 + sum(3 + len(ENC.encode(m["role"])) + len(ENC.encode(m["content"]))
                   for m in messages)


def build(scenes, budget, *, config=None, steer="", state=None, tier3=(), tools=(),
          retrieved=()):
    config = config or load_config()
    last = scenes.count
    inputs = WriterInputs(story=sf.story(), memory=sf.memory(), plan=sf.plan(last + 1),
                          last_tick=last, scene=scenes, tick=last + 1, steer=steer,
                          state=state or {}, tier3=tier3, tool_results=tools,
                          retrieved=retrieved)
    propose = propose_writer(inputs, COUNTER, budget, config.context, config.generation)
    return fit(propose, lambda c: render_stage(c), COUNTER, budget,
               config.context.compaction_thresholds)


def section_order(messages) -> list[str]:
    text = messages[-1]["content"]
    found = [(m.start(), name) for name, title in TITLES.items()
             for m in re.finditer(rf"^## {re.escape(title)}$", text, re.M)]
    return [name for _, name in sorted(found)]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(count=st.integers(0, 2000), words=st.integers(20, 5000), jitter=st.integers(0, 3),
       budget=st.sampled_from([300, 600, 1500, 4000, 12000, 120000]),
       steer_words=st.sampled_from([0, 10, 400]))
def test_prompt_never_exceeds_budget_and_keeps_pinned_and_order(count, words, jitter, budget,
                                                                 steer_words):
    scenes = sf.SyntheticScenes(count, lambda t: max(20, words // (1 + (t * jitter) % 4)))
    steer = sf.prose(steer_words, 1) if steer_words else ""
    try:
        fitted = build(scenes, budget, steer=steer)
    except ContextOverflowError as exc:
        # only when the pinned parts alone do not fit, and the error says which
        assert exc.tokens > 0 and exc.section in ("bible", "steer", "intention", "tools",
                                                  "instructions")
        assert exc.budget == budget
        return
    sent = tiktoken_count(fitted.messages)
    assert sent == fitted.tokens
    assert sent <= budget
    user = fitted.messages[-1]["content"]
    assert "Mara confronts Tobin about the map" in user
    assert "A lighthouse keeper finds a drowned man's map." in user
    if steer:
        assert steer in user
    order = section_order(fitted.messages)
    assert order == [name for name in WRITER_ORDER if name in order]
    if count:
        assert f"### Scene {count}" in user  # the newest scene is always there (maybe cut)
    assert scenes.loaded <= 60  # the build reads the tiers' scenes, not the whole story


def test_pinned_parts_too_big_is_a_clear_error():
    scenes = sf.SyntheticScenes(3, lambda t: 100)
    with pytest.raises(ContextOverflowError) as info:
        build(scenes, 800, steer=sf.prose(2000, 3))
    assert info.value.section == "steer"
    assert info.value.tokens > 800
    assert "'steer'" in str(info.value) and "budget is 800" in str(info.value)


def test_dynamic_sizing_short_scenes_all_whole_long_scene_pushes_older_out():
    config = load_config()
    short = build(sf.SyntheticScenes(3, lambda t: 100), 16000, config=config)
    assert short.context.section("recent_full").items == ("scene_001", "scene_002", "scene_003")
    # a 3,000-word newest scene: the older full text goes down to its summary
    lengths = {1: 300, 2: 300, 3: 3000}
    long = build(sf.SyntheticScenes(3, lambda t: lengths[t]), 16000, config=config)
    assert long.context.section("recent_full").items == ("scene_003",)
    assert set(long.context.section("recent_summaries").items) == {"scene_001", "scene_002"}
    assert long.level == 0


def test_compaction_level_1_turns_older_full_text_into_summaries():
    # 800-word scenes, and a tier-1 share that holds three 600-word (typical) scenes:
    # tier 1 takes two of them
    config = load_config(flags={"generation.scene_max_words": 600,
                                "context.tier1_share": 0.7, "context.tier2_share": 0.05,
                                "context.tier3_share": 0.05, "context.cast_share": 0.05,
                                "context.retrieved_share": 0.05})
    fitted = build(sf.SyntheticScenes(6, lambda t: 800), 4000, config=config)
    assert fitted.level == 1
    assert fitted.context.section("recent_full").items == ("scene_006",)
    assert "scene_005" in fitted.context.section("recent_summaries").items
    assert any("shown as its summary" in n.reason for n in fitted.notes)


def test_a_big_pinned_tail_raises_the_level():
    scenes = sf.SyntheticScenes(20, lambda t: 150)
    calm = build(scenes, 6000)
    note = "\n".join(sf.prose(60, i) for i in range(40))   # a pinned tail the writer reads
    tight = build(scenes, 6000, steer=note)
    assert calm.level == 0 and tight.level >= 1
    assert tight.tokens <= 6000
    assert len(tight.context.section("recent_full").items) < len(
        calm.context.section("recent_full").items)


def test_compaction_level_2_shows_the_older_summaries_as_titles():
    config = load_config(flags={"generation.summary_scenes_count": 6,
                                "context.compaction_thresholds": [0.01, 0.02, 0.99]})
    scenes = sf.SyntheticScenes(20, lambda t: 150)
    calm = build(scenes, 6000, config=load_config(flags={"generation.summary_scenes_count": 6}))
    tight = build(scenes, 6000, config=config)
    assert calm.level == 0 and tight.level == 2
    # no recent scene is left out: level 1 moved the older full text to tier 2 ...
    kept = tight.context.section("recent_summaries").items
    assert set(calm.context.section("recent_summaries").items) < set(kept)
    # ... and level 2 shows its older half by title only
    lined = [n.key for n in tight.notes if n.section == "recent_summaries" and n.form == "line"]
    assert lined == list(kept[:len(kept) - len(kept) // 2])
    text = tight.context.text("recent_summaries")
    assert f"Scene {int(lined[-1][6:])} — Scene {int(lined[-1][6:])}\n\n" in text
    assert all("older tier-2 scene as its title" in n.reason for n in tight.notes
               if n.key in lined and n.section == "recent_summaries")


def test_compaction_level_3_keeps_the_pinned_the_last_scene_and_each_sections_best():
    config = load_config(flags={"context.compaction_thresholds": [0.01, 0.02, 0.03]})
    scenes = sf.SyntheticScenes(30, lambda t: 150)
    tier3 = [Piece("checkpoint_010", "- things happened"), Piece("overall", "In short.")]
    fitted = build(scenes, 3000, config=config, steer="Snow.", tier3=tier3)
    assert fitted.level == 3 and fitted.tokens < 3000 and fitted.truncated == []
    names = [s.name for s in fitted.context.sections if s.text]
    assert names == ["bible", "tier3", "cast", "recent_summaries", "recent_full",
                     "intention", "steer"]      # no section with items is emptied
    assert fitted.context.section("recent_full").items == ("scene_030",)
    summarized = fitted.context.section("recent_summaries").items
    assert summarized[-1] == "scene_029" and len(summarized) > 1     # the rest as titles
    assert fitted.context.text("recent_summaries").count("\n- ") < 5
    assert fitted.context.text("tier3") == "In short."         # the newest summary only
    assert any(n.key == "checkpoint_010" and not n.included for n in fitted.notes)
    # the cast by name; the scene's own people are described in the tail instead
    assert fitted.context.text("cast") == "Mara Quill, Tobin Keel, The harbour"
    intention = fitted.context.text("intention")
    assert "POV: Mara Quill — the keeper (traits: stubborn" in intention
    assert "Also present: Tobin Keel — the ferryman" in intention


def test_at_level_3_the_best_items_that_do_not_fit_go_before_the_last_scene_is_cut():
    scenes = sf.SyntheticScenes(30, lambda t: 300)
    tier3 = [Piece("checkpoint_010", "- things happened"),
             Piece("overall", "In short: " + sf.prose(60, 2))]
    fitted = build(scenes, 600, tier3=tier3, steer="Snow.")
    assert fitted.level == 3 and fitted.tokens <= 600
    assert fitted.dropped == ["tier3", "recent_summaries"] and fitted.truncated == []
    assert [s.name for s in fitted.context.sections if s.text] == [
        "bible", "cast", "recent_full", "intention", "steer"]
    assert "tokens cut from the middle" not in fitted.context.text("recent_full")
    dropped = [n for n in fitted.notes if n.reason.startswith("dropped whole")]
    assert sorted((n.key, n.section, n.included) for n in dropped) == [
        ("overall", "tier3", False), ("scene_029", "recent_summaries", False)]


def test_middle_out_truncation_is_the_last_safety_net():
    fitted = build(sf.SyntheticScenes(1, lambda t: 5000), 2000)
    full = fitted.context.section("recent_full").text
    assert "tokens cut from the middle" in full
    assert full.startswith("### Scene 1") and full.rstrip().endswith(
        sf.SyntheticScenes(1, lambda t: 5000)(1).body.rstrip()[-40:])
    assert fitted.truncated == ["recent_full"] and fitted.tokens <= 2000


def test_tiers_move_in_steps_and_prompts_share_a_prefix():
    config = load_config()
    state, shares, levels = {}, [], []
    previous = None
    from novel_agent.context.report import prefix_share
    for last in range(1, 41):
        scenes = sf.SyntheticScenes(last, lambda t: 250 + (t * 37) % 200)
        fitted = build(scenes, 12000, config=config, state=state)
        state = fitted.state
        if previous:
            shares.append(prefix_share(fitted.messages, previous, COUNTER)[1])
        previous = fitted.messages
        levels.append(fitted.level)
    assert max(levels) == 0
    steady = shares[10:]
    assert sorted(steady)[len(steady) // 2] >= 0.5  # the median prompt shares half
    assert sum(steady) / len(steady) >= 0.5


def test_each_compaction_level_asks_tier3_for_what_fits_its_share():
    asked = []

    def tier3(budget, upto):
        assert upto is None          # no tier3_ends given: tier 3 as a whole
        asked.append(budget)
        if budget >= 700:   # room for detail: the checkpoints
            return [Piece(f"checkpoint_{i:03d}", sf.prose(40, i)) for i in (10, 20, 30, 40)]
        return [Piece("arc_001", sf.prose(40, 99))]   # tighter: the arc that covers them
    config = load_config(flags={"context.compaction_thresholds": [0.01, 0.02, 0.99]})
    calm = build(sf.SyntheticScenes(12, lambda t: 120), 8000, tier3=tier3)
    tight = build(sf.SyntheticScenes(12, lambda t: 120), 8000, config=config, tier3=tier3)
    assert calm.context.section("tier3").items == ("checkpoint_010", "checkpoint_020",
                                                   "checkpoint_030", "checkpoint_040")
    assert tight.level == 2 and tight.context.section("tier3").items == ("arc_001",)
    assert asked[0] == int(8000 * config.context.tier3_share) and min(asked) == asked[0] // 2


def test_tier3_over_its_stretch_tells_its_oldest_in_short_rather_than_leave_them_out():
    """The coarsest cut over twice the tier-3 share (select_tier3 keeps it whole): the
    newest summaries whole, the oldest as their heading and first and last sentences,
    so every scene from the first is still told."""
    def block(first, last, seed):
        return Piece(f"arc_{seed:03d}", f"### Scenes {first}–{last}\n" + sf.prose(450, seed))
    tier3 = [block(1, 160, 1), block(161, 240, 2), block(241, 260, 3), block(261, 270, 4)]
    fitted = build(sf.SyntheticScenes(280, lambda t: 120), 8000, tier3=tier3)
    assert fitted.level < 3
    text = fitted.context.text("tier3")
    assert fitted.context.section("tier3").items == ("arc_001", "arc_002", "arc_003", "arc_004")
    assert text.index("### Scenes 1–160\n") < text.index("### Scenes 261–270\n")
    short = {n.key for n in fitted.notes if n.section == "tier3" and n.form == "line"}
    assert "arc_001" in short and "arc_004" not in short
    assert all(n.included for n in fitted.notes if n.section == "tier3")
    assert len(text.split("### Scenes 1–160\n")[1].split("###")[0].split()) <= 60


@pytest.mark.parametrize("preset, full, summaries", [
    ("conservative", 1, 2), ("balanced", 2, 3), ("aggressive", 3, 5)])
def test_presets_set_the_tiers_on_scenes_of_typical_length(preset, full, summaries):
    config = load_config(preset=preset)
    words = config.generation.scene_max_words           # typical length
    scenes = sf.SyntheticScenes(60, lambda t: words)
    sizes1, sizes2, state = [], [], {}
    for last in range(20, 61):
        scenes.count = last
        fitted = build(scenes, 31000, config=config, state=state)
        state = fitted.state
        sizes1.append(len(fitted.context.section("recent_full").items))
        sizes2.append(len(fitted.context.section("recent_summaries").items))
    assert (min(sizes1), max(sizes1)) == (full, full + 1)     # low water, high water
    assert min(sizes2) == summaries and max(sizes2) <= 2 * summaries


@pytest.mark.parametrize("preset, fill", [("conservative", 0.60), ("balanced", 0.80),
                                          ("aggressive", 0.95)])
def test_relevant_memory_fills_the_prompt_up_to_the_presets_target_fill(preset, fill):
    config = load_config(preset=preset)
    assert config.context.target_fill == fill
    facts = [Item(f"fact:{t}:x", (f"- Fact (scene {t}): {sf.prose(18, t)}",), 1.0 + t / 1000,
                  (t, True)) for t in range(1, 400)]             # far more than fits
    fitted = build(sf.SyntheticScenes(40, lambda t: 300), 6000, config=config,
                   retrieved=facts)
    share = fitted.tokens / 6000
    # the compaction thresholds (0.40–0.60 first) do not cap relevant memory: the room up
    # to the target fill goes to retrieval, which is left out only where it does not fit
    assert fill - 0.05 <= share <= fill + 0.01
    assert fitted.level == 0
    taken = fitted.context.section("retrieved").items
    assert len(taken) > 16 and taken[-1] == "fact:399:x"         # the best, no fixed count


def settled_build(scenes, budget, *, state, asked=None, facts=60):
    """A writer build with checkpoints every 10 scenes, a settled block of `facts` facts
    about scenes up to where tier 3 ends, and per-scene facts of its own."""
    last = scenes.count

    def settled(upto, window):
        if asked is not None:
            asked.append((upto, tuple(s.tick for s in window)))
        return [Item(f"fact:{t}:h{n}", (f"- Fact (scene {t}): what scene {t} showed, {n}",),
                     10.0 - t / 100, (t, True, n)) for t in range(1, upto + 1)
                for n in range(20)][:facts]

    retrieved = [Item(f"fact:{t}:p{last}", (f"- Fact (scene {t}): for scene {last + 1}, "
                                            + sf.prose(12, t + last),), 5.0, (t, True))
                 for t in range(1, 30)]
    tier3 = lambda room, upto: [Piece(f"checkpoint_{e:03d}", sf.prose(30, e))  # noqa: E731
                                for e in range(10, (upto or 0) + 1, 10)]
    config = load_config()
    inputs = WriterInputs(story=sf.story(), memory=sf.memory(), plan=sf.plan(last + 1),
                          last_tick=last, scene=scenes, tick=last + 1, state=state,
                          tier3=tier3, tier3_ends=list(range(10, last, 10)),
                          retrieved=retrieved, settled=settled)
    propose = propose_writer(inputs, COUNTER, budget, config.context, config.generation)
    return fit(propose, lambda c: render_stage(c), COUNTER, budget,
               config.context.compaction_thresholds)


def test_the_settled_block_is_the_same_until_tier3_moves_and_the_tiers_only_grow():
    """Tier 3 ends at checkpoint 30 from the prompt for scene 32 (scene 31 written) to the
    one for scene 41: what comes before the recent tiers is byte for byte the same, the
    settled block is asked for the same tick and scenes, and each prompt's recent tiers
    hold the previous one's scenes and one more."""
    state, heads, asked, held = {}, [], [], []
    for last in range(31, 41):
        scenes = sf.SyntheticScenes(last, lambda t: 250 + (t * 37) % 200)
        fitted = settled_build(scenes, 7000, state=state, asked=asked)
        state = fitted.state
        text = fitted.messages[-1]["content"]
        heads.append(text[:text.index("## Earlier scenes (summaries)\n")
                          if "## Earlier scenes (summaries)\n" in text
                          else text.index("## The last scenes in full\n")])
        held.append(fitted.context.section("recent_summaries").items
                    + fitted.context.section("recent_full").items)
        assert fitted.context.section("settled").items          # it has items, and room
    assert len(set(heads)) == 1 and "## Earlier, about these people and places\n" in heads[0]
    assert {a for a in asked} == {(30, (26, 27, 28, 29, 30))}
    assert [len(h) for h in held] == list(range(1, 11))
    assert held[-1][0] == "scene_031" and held[-1][-1] == "scene_040"
    # the next checkpoint moves all of it at once
    fitted = settled_build(sf.SyntheticScenes(41, lambda t: 300), 7000, state=state,
                           asked=asked)
    assert asked[-1] == (40, (36, 37, 38, 39, 40))
    assert fitted.context.section("tier3").items[-1] == "checkpoint_040"


def test_the_per_scene_block_keeps_to_its_share_while_the_settled_block_has_items():
    """The block chosen for each scene (after the newest scene) takes its share, or the
    room the rest leaves under the target fill, not more: the settled block, before the
    recent tiers, has the rest of the room."""
    budget = 7000
    config = load_config()
    share = int(budget * config.context.retrieved_share)
    target = int(budget * config.context.target_fill)
    for last in (32, 37, 40):
        fitted = settled_build(sf.SyntheticScenes(last, lambda t: 480), budget, state={},
                               facts=400)
        assert any(not n.included for n in fitted.notes if n.section == "settled")
        retrieved = fitted.context.section("retrieved")
        size = COUNTER.count(retrieved.text)
        assert retrieved.items and size <= max(share, target - (fitted.tokens - size))
        assert not set(retrieved.items) & set(fitted.context.section("settled").items)
        assert fitted.context.section("settled").items and fitted.tokens <= budget
