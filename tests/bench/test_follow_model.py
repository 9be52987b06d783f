"""bench/shape.py's follow model (tests/support/follow_model.py) does what its prompts ask:
it reads where the book stands and the loops it is shown from the planner's prompt, lands
the beats in order, rates the tension it was shown (exactly, without noise), lands a beat
at once when the chapter's room is used up, opens loops only outside the final act and
resolves them all by the end; in-process and through the test server alike."""

from __future__ import annotations

from novel_agent.errors import BookFinishedError
from novel_agent.story.memory.read import load_memory
from novel_agent.story.outline.standing import tension_course
from novel_agent.story.project.recovery import reconciled
from novel_agent.story.scenes import load_scenes
from novel_agent.tick.pipeline import tick
from novel_agent.tick.session import Session
from tests.support.fake_openai import FakeOpenAIServer
from tests.support.follow_model import FollowModel, Shown, read_shown, shown_due
from tests.support.projects import outline_project
from tests.support.story_server import StoryServer
from tests.support.ticking import NOW

RICH = """## Open plot loops
[who_sent_a_torn_map] who sent a torn map (opened in scene 2)
[what_lies_beneath] what lies beneath the tower (opened in scene 7)
[bare_loop]

## Where the book stands
Act 2 of 3, "Deeper Water": Mara is in too deep.
Chapter 5 of 12, "The Cost": things get worse.
The chapter's room is used up (4 scenes written of its 4): land what is left of it now.
Current beat 5.3 (tension 6): Osric comes to the salt market asking after the map.
Next beat 6.1 (tension 7): A secret comes out.
Tension: this scene's target is 6 of 10; the last scenes were 5 (scene 8): on target.

Plan scene 9, with a title no earlier scene has. Answer with the JSON object only."""

BARE = """## Where the book stands
Act 3 of 3; chapter 12 of 12, "Homeward", room 2; beat 12.1 (tension 3): Mara comes home \
changed, the last …; target tension 3 (last: 9, 8).

Plan scene 118, with a title."""


def test_the_planners_prompt_is_read_in_its_rich_form_and_its_barest():
    shown = read_shown(RICH)
    assert shown == Shown(scene=9, beat="5.3",
                          what="Osric comes to the salt market asking after the map.", target=6,
                          act=(2, 3), used_up=True,
                          loops=[("who_sent_a_torn_map", 2), ("what_lies_beneath", 7),
                                 ("bare_loop", None)])
    assert not shown.final_act
    bare = read_shown(BARE)
    assert (bare.scene, bare.beat, bare.target, bare.act, bare.used_up) == \
        (118, "12.1", 3, (3, 3), False)
    assert bare.what.startswith("Mara comes home changed") and bare.final_act


def test_a_loop_is_due_once_it_has_ripened_and_every_one_in_the_final_act():
    shown = read_shown(RICH)
    assert shown_due(shown, ripen=6) == ["who_sent_a_torn_map", "bare_loop"]
    assert shown_due(shown, ripen=2) == ["who_sent_a_torn_map", "what_lies_beneath", "bare_loop"]
    last = Shown(scene=9, act=(3, 3), loops=shown.loops)
    assert shown_due(last, ripen=99) == ["who_sent_a_torn_map", "what_lies_beneath", "bare_loop"]


def ticked_to_the_end(project, make_model, config=None, env=None, limit=30):
    """Tick until a tick refuses (the book is finished): the ticks that ran."""
    results = []
    with reconciled(project), Session.open(project, config or project.config(), env,
                                           make_model=make_model, now=lambda: NOW) as session:
        for _ in range(limit):
            try:
                results.append(tick(session))
            except BookFinishedError:
                return results
    raise AssertionError(f"the book did not end in {limit} ticks")


def course(project):
    from novel_agent.story.outline.file import load_outline
    scenes = load_scenes(project.scenes_dir)
    return list(tension_course(load_outline(project.outline_file), scenes,
                               project.config().outline.curve).values())


def test_in_process_it_lands_every_beat_in_order_at_the_tension_it_was_shown(project):
    outline_project(project, chapters=3, beats=2, scenes=2)
    results = ticked_to_the_end(project, lambda: FollowModel(noise=0,
                                                                    partly=0, opens=0))
    scenes = load_scenes(project.scenes_dir)
    assert [(s.beat, s.beat_status) for s in scenes] == [
        ("1.1", "done"), ("1.2", "done"), ("2.1", "done"), ("2.2", "done"),
        ("3.1", "done"), ("3.2", "done")]
    assert results[-1].finished
    pairs = course(project)
    assert len(pairs) == 6 and all(target == realized for target, realized in pairs), pairs
    assert len({target for target, _ in pairs}) > 1         # the curve moves: not a constant


def test_through_the_test_server_it_reads_the_same_from_the_prompts(project):
    project.project_file.write_text(project.project_file.read_text().replace(
        "provider: offline", "provider: openai\n  model: small-local-model"))
    outline_project(project, chapters=3, beats=2, scenes=2)
    story = StoryServer(project, model=FollowModel(noise=0, partly=0, opens=0))
    with FakeOpenAIServer(story) as server:
        config = project.config(flags={"llm.base_url": server.base_url})
        ticked_to_the_end(project, None, config=config, env={"OPENAI_API_KEY": "sk-test"})
    story.close()
    scenes = load_scenes(project.scenes_dir)
    assert [s.beat for s in scenes] == ["1.1", "1.2", "2.1", "2.2", "3.1", "3.2"]
    assert all(s.beat_status == "done" for s in scenes)
    pairs = course(project)
    assert len(pairs) == 6 and all(target == realized for target, realized in pairs), pairs
    assert any(r["path"].endswith("/chat/completions") for r in server.requests)


def test_a_beat_only_partly_done_is_landed_once_the_chapters_room_is_used_up(project):
    outline_project(project, chapters=3, beats=2, scenes=2)
    ticked_to_the_end(project, lambda: FollowModel(partly=1.0, opens=0))
    scenes = load_scenes(project.scenes_dir)
    # room 2, then 1: partly; then one scene is left of the chapter's stretch (3) and two
    # beats to land, so 1.1 is passed (missed) and the room used up: 1.2 is landed, done,
    # and the book goes on to chapter 2
    assert [(s.chapter, s.beat, s.beat_status) for s in scenes][:4] == [
        (1, "1.1", "partly"), (1, "1.1", "partly"), (1, "1.2", "done"), (2, "2.1", "partly")]


def test_it_opens_loops_outside_the_final_act_and_resolves_every_one_by_the_end(project):
    outline_project(project, chapters=3, beats=2, scenes=2)      # act 3: chapter 3, scenes 5-6
    ticked_to_the_end(project, lambda: FollowModel(opens=1.0, ripen=3,
                                                          partly=0))
    loops = load_memory(project.memory_dir).loops
    assert len(loops) >= 3 and all(loop["opened_in"] <= 4 for loop in loops), loops
    assert all(loop["status"] == "resolved" for loop in loops), loops
    assert any(loop["resolved_in"] <= 4 for loop in loops)      # ripened before the last act
    assert any(loop["opened_in"] == 4 for loop in loops)    # unripe: due in the last act


DUE_RICH = """## Where the book stands
Act 3 of 3, "The Reckoning": …
Current beat 4.1 (tension 6): A secret about the map comes out at the old observatory.
Loops due, most urgent first (resolve each: resolve_loop naming its id):
- [what_lies_beneath_the_old_observatory] what lies beneath The old observatory (payoff 4)
- [who_is_paying_osric_s_debts] who is paying Osric's debts (payoff 3, deferred)
- and 2 more due
Final act: open no new loop; pay off the loops left.

## Open plot loops
[who_sent_a_torn_map] who sent a torn map (opened in scene 2)
"""


def test_the_loops_due_are_read_from_where_the_book_stands_once_it_lists_them():
    shown = read_shown(DUE_RICH)
    assert shown_due(shown, ripen=6) == ["what_lies_beneath_the_old_observatory",
                                         "who_is_paying_osric_s_debts"]
    assert shown.final_act
    bare = read_shown("## Where the book stands\nAct 2 of 3; chapter 5; beat 5.1: x; "
                      "loops due: who_sent_a_map, whose_boat (+3)\n")
    assert shown_due(bare, ripen=6) == ["who_sent_a_map", "whose_boat"]
    assert not bare.final_act
    assert shown_due(read_shown(RICH), ripen=6) == ["who_sent_a_torn_map", "bare_loop"]
