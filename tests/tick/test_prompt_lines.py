"""No line of any prompt grows from tick to tick (issue 51, item 4).

On the glassblowers' book the embedded model copied a character line's "last at the
mountain glassworks in scene 6" back, as the plan's location and as the place its
extraction said someone was; memory stored it whole, and the next prompt said "last at
… in scene 6 in scene 7", one scene longer each tick ("… in scene 6 in scene 7 in scene
8"). A stress model that copies its prompt back the same way
(stress_model.CopyingStressModel) runs 30 ticks; every request of every stage is kept.
A line is known by its leading words (up to four, before a "(" or a ":": a character's
name, a label); it has grown when it is longer than the same line ten ticks before and
keeps every word it had, in order (words added, none replaced), over both spans of ten
ticks (tick 21 against 11, and 11 against 1, and so on): a line that changes once in
form (a scene told in full, then in short; a schema note once the first one dies) or
that says other things (another place, another plan) has not grown.
"""

from __future__ import annotations

import re
from collections import defaultdict

import pytest

from novel_agent.story.memory.read import load_memory
from novel_agent.story.project.folder import create_project
from tests.support.scripted import ScriptedModel
from tests.support.stress_model import CopyingStressModel
from tests.support.ticking import run_ticks

TICKS = 30
SPAN = 10
_WORD = re.compile(r"[\w'’-]+")


def key_of(line: str) -> str:
    """A line's key: its first four words before a "(" or a ":" ("Ines Karr", "Scene
    intention")."""
    return " ".join(_WORD.findall(re.split(r"[(:]", line, maxsplit=1)[0])[:4])


def prompt_lines(requests) -> dict[tuple[str, str], dict[int, str]]:
    """(stage, key) -> tick -> the longest line of that key in the stage's prompts of the
    tick (a tick begins with its planner's request)."""
    lines: dict[tuple[str, str], dict[int, str]] = defaultdict(dict)
    tick = 0
    for request in requests:
        tick += request.stage == "planner"
        for message in request.messages:
            for line in message["content"].splitlines():
                key = (request.stage, key_of(line))
                if key[1] and len(line) > len(lines[key].get(tick, "")):
                    lines[key][tick] = line
    return lines


def kept_and_added(before: str, after: str) -> bool:
    """Whether `after` is longer than `before` and keeps each of its words, in order."""
    rest = iter(_WORD.findall(after))
    return len(after) > len(before) and all(word in rest for word in _WORD.findall(before))


def growing(lines: dict[tuple[str, str], dict[int, str]]) -> list[tuple[str, str, int, str]]:
    """The lines that grew over two spans of SPAN ticks running: (stage, key, tick, line)."""
    out = []
    for (stage, key), by_tick in lines.items():
        for tick, line in by_tick.items():
            early, earlier = by_tick.get(tick - SPAN), by_tick.get(tick - 2 * SPAN)
            if early and earlier and kept_and_added(early, line) and kept_and_added(earlier, early):
                out.append((stage, key, tick, line))
    return out


def test_a_line_is_growing_only_when_it_keeps_its_words_and_adds_more_twice():
    line = "- Ines Karr (last at the glassworks in scene 6)"
    grown = {1: line, 11: line.replace(")", " in scene 11)"),
             21: line.replace(")", " in scene 11 in scene 21)")}
    assert growing({("planner", "Ines Karr"): grown}) == [("planner", "Ines Karr", 21, grown[21])]
    moved = dict(grown)
    moved[21] = "- Ines Karr (last at the harbour archive in scene 20)"      # another place
    once = {1: "Scene 6 — The Lamp", 11: "Scene 6 — The Lamp: she lights it.",
            21: "Scene 6 — The Lamp: she lights it."}                       # a form, once
    assert growing({("planner", "Ines Karr"): moved, ("writer", "Scene 6 The Lamp"): once}) == []


@pytest.fixture(scope="module")
def copied(tmp_path_factory):
    project = create_project(tmp_path_factory.mktemp("glass") / "glass", {
        "name": "glass", "premise": "A glassblower's apprentice learns that her dead "
        "master's glass apples each hold the memory of a villager who vanished.",
        "protagonist": "Ines Karr"}, config={"llm": {"provider": "offline"}})
    model = ScriptedModel(otherwise=CopyingStressModel(seed=0))
    results = run_ticks(project, TICKS, model)
    return project, results, model.requests


def test_thirty_ticks_of_a_model_that_copies_its_prompt_back_grow_no_prompt_line(copied):
    project, results, requests = copied
    assert [r.tick for r in results] == list(range(1, TICKS + 1))
    lines = prompt_lines(requests)
    assert {stage for stage, _ in lines} >= {"planner", "writer", "extractor"}
    last_at = [line for (stage, _), by in lines.items() for line in by.values()
               if "last at " in line]
    assert len(last_at) > TICKS            # the lines the model copies back are there
    assert growing(lines) == []
    assert not any(re.search(r"in scene \d+\W+in scene", line) for line in last_at)


def test_memory_keeps_a_place_name_and_each_plan_a_place(copied):
    project, results, _ = copied
    copied_places = [r.plan.location for r in results if r.plan is not None]
    assert not any(re.search(r"\bscene \d|^(?:inside|last at)\b", place, re.I)
                   for place in copied_places), copied_places
    places = [str(c.get("place")) for c in load_memory(project.memory_dir).characters.values()
              if c.get("place")]
    assert places and not any(re.search(r"\bscene\b|^inside\b", p, re.I) for p in places), places
