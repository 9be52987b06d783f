"""Issue 20: tick 300 is as good as tick 30, on a stress run at an 8,192-token window.

The stress model (stress_model.py) brings 2–4 new characters or places and a new
loop nearly every scene and resolves none. After 300 ticks in-process the last
prompts must use the budget, recall what is relevant, tell every scene after
the story so far once, keep the summary tree shallow, show the planner new loops
and checkpoint the newest scenes in full text.
"""

from __future__ import annotations

import json
import statistics

import pytest

from novel_agent.context.builders import intention_text
from novel_agent.context.relevance import Focus, character_line, loop_items
from novel_agent.context.sections import describe_character
from novel_agent.story.decisions import Plan
from novel_agent.story.memory.read import load_memory
from novel_agent.story.memory.store import Memory, loop_marks, touches
from novel_agent.story.project.recovery import reconciled
from novel_agent.story.style import learned_text
from novel_agent.story.summaries import load_tree, tree_depth
from novel_agent.tick.pipeline import tick
from novel_agent.tick.session import Session
from tests.support.long_checks import LongRun
from tests.support.stress_model import StressModel

SAMPLE = ("The lamp was lit at four, as it had been every winter evening. She trimmed the wick "
          "and wrote the hour in the log.\n\n\"You'll want the kettle on,\" said Haig. He did "
          "not get out of the boat. He never got out.\n\n\"I have tea,\" she said. Below, the sea "
          "came at the rock in long grey ridges, and she counted them without meaning to.")


def test_a_loop_is_touched_by_what_tells_it_apart_not_by_common_words():
    loops = [{"id": f"l{n}", "description": f"what the {word} token of Mara Quill means"}
             for n, word in enumerate(["rajunjun", "halurra", "korralor"])]
    marks = loop_marks(loops)
    assert marks["l0"] == {"rajunjun"}         # "token", "quill", "means" are in every loop
    summary = "Mara Quill turns the token over; what it means she cannot say."
    assert not any(touches(summary, marks[l["id"]]) for l in loops)
    assert touches("She buries the rajunjun token.", marks["l0"])
    assert not touches("She buries the rajunjun token.", marks["l1"])


def test_the_planner_sees_the_newest_loops_and_a_bounded_share_of_overdue_ones():
    loops = [{"id": f"old_{n}", "description": f"old question {n}", "opened_in": n,
              "status": "open", "scenes": [n]} for n in range(1, 13)]
    loops += [{"id": f"new_{n}", "description": f"new question {n}", "opened_in": 300 - n,
               "status": "open", "scenes": [300 - n]} for n in range(1, 30)]
    items = sorted(loop_items(Memory(loops=loops), Focus.of(301)), key=lambda i: -i.score)
    best = [i.key for i in items[:12]]
    assert sum(k.startswith("loop:old_") for k in best) == 3          # the oldest three
    assert {"loop:old_1", "loop:old_2", "loop:old_3"} <= set(best)
    assert "loop:new_1" in best and "loop:new_9" in best               # the newest


def test_where_things_stand_keeps_a_state_whole_and_a_card_is_never_a_bare_name():
    state = "waits at the ferry landing for the drowned man's brother to come back at last"
    mara = {"id": "mara_quill", "name": "Mara Quill", "state": state, "first_seen": 3}
    assert character_line(mara, 0) == f"Mara Quill (now: {state})"     # room: all of it
    assert character_line(mara).endswith("…)")                         # leaner: cut
    ada = {"id": "ada", "name": "Ada Vane", "first_seen": 7}
    assert describe_character(ada) == character_line(ada) == "Ada Vane (first seen in scene 7)"
    assert character_line({**ada, "state": "asleep"}) == "Ada Vane (now: asleep)"
    memory = Memory(characters={"ada": {**ada, "state": "asleep"}, "bo": {
        "id": "bo", "name": "Bo Reed", "description": "a ferryman", "state": "rowing"}})
    brief = intention_text(Plan(intention="They meet.", pov="Ada Vane", location="the quay",
                                characters=["Bo Reed"]), memory, described=["Bo Reed"])
    assert "POV: Ada Vane (now: asleep)\n" in brief + "\n"        # one bracket, not two
    assert "Bo Reed (now: rowing)" in brief and "a ferryman" not in brief   # described before


@pytest.fixture(scope="module")
def long_run(tmp_path_factory):
    from novel_agent.story.project.folder import create_project
    folder = tmp_path_factory.mktemp("stress")
    project = create_project(folder / "stress", {
        "name": "stress", "premise": "A lighthouse keeper finds a drowned man's map.",
        "protagonist": "Mara Quill"},
        config={"llm": {"provider": "offline"}, "context": {"window": 8192}})
    (project.root / "style.yaml").write_text(learned_text([SAMPLE], ["sample.md"]),
                                             encoding="utf-8")
    watch = LongRun(project)
    with pytest.MonkeyPatch.context() as patch:      # durability is not what is tested here
        patch.setattr("novel_agent.files.os.fsync", lambda fd: None)
        with reconciled(project), Session.open(project, project.config(),
                                   make_model=lambda: StressModel()) as s:
            for _ in range(300):
                watch.after(tick(s))
    return watch

def test_each_end_of_a_long_run_is_timed_against_a_fresh_book_at_the_same_moments():
    run = LongRun(None)  # type: ignore[arg-type]   # the figures only, no project read
    run.seconds = [0.10] * 55 + [0.30] * 5 + [0.20] * 55     # a checkpoint's slow ticks
    run.checkpoint = [False] * 55 + [True] * 5 + [False] * 55
    run.beside = {"head": [0.05] * 50, "tail": [0.16] * 50}   # the machine slower at the end
    assert run.ratio(run.seconds) == pytest.approx(2.0)      # raw: the drift counted too
    head, tail = run.beside_ratios()
    assert (head, tail) == (pytest.approx(2.0), pytest.approx(1.25))
    run.beside = {"head": [0.05] * 50}                        # no fresh book at the end
    assert run.beside_ratios() is None



def test_three_hundred_stress_ticks_at_8k_keep_the_last_prompts_whole(long_run):
    run = long_run
    last = [run.samples[(t, stage)] for t in range(291, 301) for stage in ("planner", "writer")]
    # 2, 3: every scene from the first is told (the story so far, then the recent tiers),
    # and none twice
    assert all(not s.missing and not s.twice for s in last), [
        (s.tick, s.stage, s.missing, s.twice) for s in last if s.missing or s.twice]
    assert all(not s.missing and not s.twice for s in run.samples.values()), [
        (s.tick, s.stage, s.missing[:5], s.twice[:5]) for s in run.samples.values()
        if s.missing or s.twice][:5]
    # 1: the writer fills its budget toward the target fill (0.80) while relevant items
    # wait, and recall holds
    writers = [s for s in run.samples.values() if s.stage == "writer" and s.tick > 50]
    assert all(s.tokens / s.budget >= 0.7 for s in writers if s.waiting)
    assert all(s.tokens <= s.budget for s in run.samples.values())
    recall = run.recall_after(50)
    assert statistics.mean(recall) >= 0.9 and sorted(recall)[len(recall) // 20] >= 0.7
    # 4: a shallow tree
    assert tree_depth(load_tree(run.project.summaries_dir)) <= 4
    # 5: the planner is shown a loop opened in the last 20 scenes
    exists, shown = run.new_loop_shown()
    assert exists and shown == exists
    opened = run.opened_in()
    for s in last:
        if s.stage == "planner":
            ages = [opened[k] for k in s.loops]
            assert sum(s.tick - a > 30 for a in ages) <= 3 < len(ages)
    # 6: the last checkpoint's scenes went in as their full text (they fit its budget)
    log = json.loads((run.project.log_dir / "tick_300_summarizer_checkpoint_300.json")
                     .read_text())
    scenes = [i for i in log["items"] if i["section"] == "scenes"]
    assert len(scenes) == 10 and all(i["included"] and i["form"] == "full" for i in scenes), \
        [(i["key"], i["included"], i["form"], i["tokens"]) for i in scenes]
    assert log["compaction_level"] == 0 and log["tokens"] > 0.5 * log["budget"]
    # 7: the book's style reaches each of the last writers; the cards of those present
    # who have one (a scene of newcomers has none) most of them, each card once; the
    # stress model's people got cards as they spoke
    voiced = 0
    for t in range(291, 301):
        writer = json.loads((run.project.log_dir / f"tick_{t:03d}_writer.json").read_text())
        sections = {s["name"]: s for s in writer["sections"]}
        assert sections["style"]["tokens"] > 0, t
        cards = sections["voices"]["items"]
        assert len(cards) == len(set(cards)), (t, cards)
        voiced += bool(cards)
    assert voiced >= 5
    carded = [c for c in load_memory(run.project.memory_dir).characters.values()
              if c.get("voice")]
    assert len(carded) > 100
