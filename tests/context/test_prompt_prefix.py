"""What stays put comes first: consecutive planner and writer prompts share their head."""

from __future__ import annotations

import json

from novel_agent.context.builders import as_of, planner_briefing
from novel_agent.story.memory.store import Memory
from novel_agent.story.scenes import Scene
from novel_agent.tick.prompt_log import log_path
from tests.support.story_factory import story


def messages(project, tick: int, stage: str) -> str:
    data = json.loads(log_path(project, tick, stage).read_text())
    return "\n".join(m["content"] for m in data["messages"])


def head(text: str, section: str) -> str:
    return text[:text.index(f"## {section}\n")]


def test_planner_settled_sections_stay_put_between_checkpoints(ticked):
    project = ticked(25)        # balanced: checkpoints every 10 ticks, settled tick 20 for 21..30
    prompts = {t: messages(project, t, "planner") for t in (22, 23, 24, 25)}
    order = [prompts[25].index(f"## {name}\n") for name in (
        "Characters", "Relationships", "Recent scenes", "Open plot loops", "Where things stand")]
    assert order == sorted(order)
    heads = {head(prompts[t], "Relationships") for t in prompts}
    assert len(heads) == 1                     # byte for byte the same up to the relationships
    pairs = {tuple(line.split(":")[0] for line in prompts[t].split("## Relationships\n")[1]
                   .split("\n## ")[0].strip().splitlines()) for t in prompts}
    assert len(pairs) == 1                     # the same pairs (a kind may change in place)
    # recent scenes are appended: each prompt's list is the previous one's plus a scene
    recent = [prompts[t].split("## Recent scenes\n")[1].split("\n## ")[0] for t in (24, 25)]
    assert recent[1].startswith(recent[0].rstrip()) and "Scene 24 — " in recent[1]
    assert "Scene 18 — " in recent[1]           # from the settled tick's recent scenes on


def before_recent(text: str) -> str:
    """A writer prompt up to its recent tiers (tier 2, or tier 1 when tier 2 is empty)."""
    return min((text[:text.index(f"## {s}\n")] for s in ("Earlier scenes (summaries)",
                                                          "The last scenes in full")
                if f"## {s}\n" in text), key=len)


def test_writer_cast_and_settled_block_stay_put_between_checkpoints(ticked):
    """Tier 3 ends at checkpoint 20 from tick 22 (scene 21 written) to 31: what comes
    before the recent tiers -- the story so far, the cast, the settled block -- is the
    same byte for byte, and the recent tiers only grow."""
    project = ticked(25)
    prompts = {t: messages(project, t, "writer") for t in (22, 23, 24, 25)}
    heads = {before_recent(prompts[t]) for t in prompts}
    assert len(heads) == 1 and "## Who and where\n" in heads.pop()
    assert "## Earlier, about these people and places\n" in prompts[25]
    assert "Scene 21 — " in prompts[25] and "Scene 20 — " not in prompts[25].split(
        "## Earlier scenes (summaries)\n")[1]


def test_as_of_keeps_what_existed_at_the_settled_tick_without_states():
    memory = Memory(
        characters={"mara": {"id": "mara", "name": "Mara", "first_seen": 2, "last_seen": 29,
                             "state": "soaked"},
                    "tobin": {"id": "tobin", "name": "Tobin", "first_seen": 25}},
        locations={"tower": {"id": "tower", "name": "The tower", "first_seen": 1,
                             "last_seen": 28}},
        relationships=[{"a": "Mara", "b": "Tobin", "kind": "rivals", "since": 26},
                       {"a": "Mara", "b": "Ann", "kind": "friends", "since": 4,
                        "updated_in": 27}])
    scenes = [Scene(tick=t, body="x", pov="Mara" if t == 12 else "Ann", location="The tower"
                    if t == 15 else "The quay") for t in range(10, 21)]
    then = as_of(memory, scenes, 20)
    assert list(then.characters) == ["mara"] and "state" not in then.characters["mara"]
    assert then.characters["mara"]["last_seen"] == 12          # as the scenes to 20 show
    assert then.locations["tower"]["last_seen"] == 15
    assert [(r["b"], r["updated_in"]) for r in then.relationships] == [("Ann", 4)]
    assert memory.characters["mara"]["state"] == "soaked"       # the memory is untouched


def test_the_planners_recent_scenes_and_facts_do_not_move_with_the_loops():
    """Recent scenes and "What is known" are filled before the loops (which change every
    tick), so the room they get, and their text, does not depend on how many loops are
    open: with the recent scenes over their share, 3 loops or 12 leave them the same."""
    from novel_agent.context.briefing import propose_briefing
    from novel_agent.context.builders import planner_briefing
    from novel_agent.context.items import Item
    from novel_agent.text.tokens import TokenCounter
    from tests.support import story_factory as sf

    counter = TokenCounter("gpt-4o-mini")
    recent = [Scene(tick=t, body="x", title=f"The crossing {t}", pov="Mara",
                    location="The quay", summary=[f"Mara waits at the quay in the rain, the "
                                                 f"{t}th night of the siege, and counts boats."
                                                 for _ in range(4)]) for t in range(1, 41)]
    facts = [Item(f"fact:{t}:x", (f"- Fact (scene {t}): Mara keeps token {t}",), 1.0, (t,))
             for t in range(1, 30)]
    shares = {"overall": 0.08, "loops": 0.10, "characters": 0.08, "recent": 0.20,
              "relationships": 0.05, "locations": 0.03, "now": 0.04, "facts": 0.05, "lore": 0.04}

    def sections(loops: int) -> dict[str, str]:
        memory = Memory(loops=[{"id": f"l{n}", "description": f"who sent letter {n}",
                                "opened_in": 40 - n, "status": "open", "scenes": [40 - n]}
                               for n in range(loops)])
        briefing = planner_briefing(sf.story(), memory, recent, tick=41,
                                    shares=shares, facts=facts)
        context = propose_briefing(briefing, counter, 4000)(0).context
        return {s.name: s.text for s in context.sections}

    few, many = sections(3), sections(12)
    assert few["loops"] != many["loops"]
    assert "The crossing 1\n" not in few["recent"] + "\n"      # over its share: leaner forms
    assert few["recent"] == many["recent"] and few["facts"] == many["facts"]


def test_the_planners_cast_is_kept_for_its_anchor_until_it_moves():
    """The characters and places chosen for an anchor (the settled tick) are kept, as
    Session.remembered keeps them: a trait a later tick gives someone known then shows
    when the anchor moves, and the section reads the same until it does."""
    kept: dict = {}

    def remember(key, make):
        if key not in kept:
            kept.clear()
            kept[key] = make()
        return kept[key]

    memory = Memory(characters={
        "mara": {"id": "mara", "name": "Mara Quill", "description": "the keeper",
                 "traits": ["stubborn"], "first_seen": 2, "last_seen": 21}},
        locations={"tower": {"id": "tower", "name": "The tower", "first_seen": 1,
                             "last_seen": 21, "description": "a lighthouse"}})
    scenes = [Scene(tick=t, body="x", pov="Mara Quill", location="The tower")
              for t in range(1, 24)]
    shares = {"overall": 0.1, "loops": 0.1, "characters": 0.1, "recent": 0.1,
              "relationships": 0.1, "locations": 0.1, "now": 0.1, "facts": 0.1, "lore": 0.1}

    def cast(tick: int, anchor: int, **kw) -> str:
        briefing = planner_briefing(story(), memory, scenes[anchor:tick - 1], tick=tick,
                                    shares=shares, anchor_tick=anchor,
                                    history=scenes[:anchor], focus_count=2, **kw)
        pool = next(p for p in briefing.pools if p.name == "characters")
        return "\n".join(i.forms[0] for i in pool.items)

    first = cast(22, 20, remember=remember)
    assert "stubborn" in first and "Mara Quill" in first
    memory.characters["mara"]["traits"].append("sleepless")      # what tick 22 learned
    assert cast(23, 20, remember=remember) == first               # kept for anchor 20
    assert "sleepless" in cast(23, 20)                            # (chosen again, it shows)
    assert "sleepless" in cast(31, 30, remember=remember)         # the anchor moved


def test_where_things_stand_does_not_repeat_a_card_that_says_nothing_new():
    """A character in the last scenes with no state, no death or absence, no place and
    nothing held would be told in "Where things stand" in the words of their card in
    "Characters" (300 stress ticks: six lines twice): they are left out of it; one with a
    state is told there, and one new since the settled tick too."""
    memory = Memory(characters={
        "nelath": {"id": "nelath", "name": "Nelath Drumiash", "description": "carries a contract",
                   "first_seen": 2, "last_seen": 21},
        "ivost": {"id": "ivost", "name": "Ivost Norgrized", "description": "carries a ledger",
                  "state": "pocketed the evidence", "first_seen": 3, "last_seen": 21},
        "shime": {"id": "shime", "name": "Shime Lamethzed", "first_seen": 21, "last_seen": 21}})
    scenes = [Scene(tick=t, body="x", pov="Nelath Drumiash", location="The yard",
                    characters=["Ivost Norgrized", "Shime Lamethzed"]) for t in range(1, 22)]
    shares = {"overall": 0.1, "loops": 0.1, "characters": 0.1, "recent": 0.1,
              "relationships": 0.1, "locations": 0.1, "now": 0.1, "facts": 0.1, "lore": 0.1}
    briefing = planner_briefing(story(), memory, scenes[20:], tick=22, shares=shares,
                                anchor_tick=20, history=scenes[:20], focus_count=2)
    now = next(p for p in briefing.pools if p.name == "now")
    told = " ".join(form for item in now.items for form in item.forms[:1])
    assert "Ivost Norgrized" in told and "pocketed the evidence" in told
    assert "Shime Lamethzed" in told                        # new since the settled tick
    assert "Nelath Drumiash" not in told                    # the card again: left out
