"""What stays put comes first: consecutive planner and writer prompts share their head."""

from __future__ import annotations

import json

from ticking import run_ticks

from novel_agent.context.builders import as_of
from novel_agent.story.memory import Memory
from novel_agent.story.scenes import Scene


def messages(project, tick: int, stage: str) -> str:
    data = json.loads((project.log_dir / f"tick_{tick:03d}_{stage}.json").read_text())
    return "\n".join(m["content"] for m in data["messages"])


def head(text: str, section: str) -> str:
    return text[:text.index(f"## {section}\n")]


def test_planner_settled_sections_stay_put_between_checkpoints(project):
    run_ticks(project, 25)      # balanced: checkpoints every 10 ticks, settled tick 20 for 21..30
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


def test_writer_cast_stays_put_between_checkpoints(project):
    run_ticks(project, 25)
    casts = {head(messages(project, t, "writer"), "Earlier scenes (summaries)")
             .split("## Who and where\n")[1] for t in (22, 23, 24, 25)}
    assert len(casts) == 1


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
