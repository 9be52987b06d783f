"""Issue 10, defects 1, 2 and 4: the files are the truth; nothing a tick did not write is
replaced. Each test reproduces the defect as a new user met it."""

from __future__ import annotations

import shutil

import pytest

from novel_agent.errors import DamagedBookError, FileFormatError, OverwriteError
from novel_agent.files import read_yaml
from novel_agent.story.project.recovery import reconciled
from novel_agent.story.scenes import Scene
from novel_agent.tick.prompt_log import log_path
from novel_agent.tick.stages.commit import commit_tick
from tests.support.ticking import run_ticks


@pytest.fixture
def six(project):
    """The project after 6 offline ticks."""
    run_ticks(project, 6)
    return project


def scenes_of(project) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(project.scenes_dir.iterdir())}


def test_missing_state_yaml_continues_from_the_scenes(six):
    before = scenes_of(six)
    plan1 = six.plan_path(1).read_bytes()
    six.state_file.unlink()
    (result,) = run_ticks(six, 1)
    assert result.tick == 7
    assert {k: v for k, v in scenes_of(six).items() if k != "scene_007.md"} == before
    assert six.plan_path(1).read_bytes() == plan1
    assert read_yaml(six.state_file)["tick"] == 7


def test_stale_counter_is_repaired_with_a_notice_never_by_overwriting(six):
    before = scenes_of(six)
    six.state_file.write_text("tick: 2\n")
    with reconciled(six) as notices:
        assert notices == ["state.yaml said tick 2, the scenes on disk end at tick 6: "
                               "the counter now follows the scenes"]
    (result,) = run_ticks(six, 1)
    assert result.tick == 7 and scenes_of(six)["scene_003.md"] == before["scene_003.md"]


def test_a_writers_own_chapters_count(project):
    for n in range(1, 21):
        project.scene_path(n).write_text(f"Chapter {n} of my own. It rained.\n")
    (result,) = run_ticks(project, 1)
    assert result.tick == 21
    assert project.scene_path(1).read_text() == "Chapter 1 of my own. It rained.\n"


def test_a_moved_scene_is_never_replaced(six, snapshot):
    shutil.move(six.scene_path(3), six.scene_path(8))
    before = snapshot(six.root)
    with pytest.raises(DamagedBookError, match="scenes/scene_003.md and 1 more are missing but "
                                               "the scenes go on to tick 8"):
        run_ticks(six, 2)          # the tick stops, naming the file, and changes nothing
    after = snapshot(six.root)     # but the cache state.yaml, re-counted from the scenes
    assert after.pop(".novel/state.yaml") != before.pop(".novel/state.yaml")
    assert after == before
    path = six.scene_path(8)       # the user says it is scene 8 now: the book has a gap
    path.write_text(path.read_text().replace("tick: 3\n", ""))
    moved = path.read_bytes()
    with pytest.raises(DamagedBookError, match="scene_003.md and 1 more are missing"):
        run_ticks(six, 2)          # never written past it
    path.rename(six.scene_path(3))     # moved back: the book goes on after scene 6
    results = run_ticks(six, 2)
    assert [r.tick for r in results] == [7, 8]
    assert six.scene_path(3).read_bytes() == moved


def test_the_commit_stops_at_a_file_it_did_not_write(six, snapshot):
    """Even if the counter is wrong, the commit names the file and changes nothing."""
    before = snapshot(six.root)
    scene = Scene(tick=3, body="New prose.", title="Over")
    with pytest.raises(OverwriteError, match=r"scenes/scene_003.md exists"):
        commit_tick(six, scene, {"tick": 3}, six_memory(six), six_memory(six), {"tick": 3})
    assert snapshot(six.root) == before


def six_memory(project):
    from novel_agent.story.memory.read import load_memory
    return load_memory(project.memory_dir)


def test_an_edited_character_id_is_reported_not_forked(six):
    path = next((six.memory_dir / "characters").glob("*.yaml"))
    text = path.read_text()
    path.write_text(text.replace(f"id: {path.stem}", "id: someone_else"))
    line = next(n for n, l in enumerate(path.read_text().splitlines(), 1) if l.startswith("id:"))
    with pytest.raises(FileFormatError) as info:
        run_ticks(six, 1)
    assert info.value.file == str(path) and info.value.line == line
    assert "the file name is the id" in str(info.value)
    assert not (six.memory_dir / "characters" / "someone_else.yaml").exists()
    assert six.tick() == 6


def test_front_matter_tick_must_agree_with_the_file_name(six):
    path = six.scene_path(2)
    path.write_text(path.read_text().replace("tick: 2", "tick: 5"))
    with pytest.raises(DamagedBookError, match="scene_002.md:2: front matter says tick 5 but "
                                               "the file name says 2"):
        run_ticks(six, 1)


def test_drafts_are_removed_once_the_tick_lands(project):
    project.drafts_dir.mkdir(parents=True)
    (project.drafts_dir / "draft_001.md").write_text("an earlier try\n")
    run_ticks(project, 1)
    assert not (project.drafts_dir / "draft_001.md").exists()


# -- defect 3: an answer cut off by the token limit ------------------------------------

from novel_agent.models.base import Completion  # noqa: E402
from novel_agent.tick.stages import write  # noqa: E402
from tests.support.scripted import ScriptedModel  # noqa: E402

PLAN = {"title": "T", "intention": "Mara climbs the tower.", "pov": "Mara Quill",
        "location": "The tower", "characters": ["Mara Quill"], "tool_calls": []}


def cut(text: str) -> Completion:
    return Completion(text=text, finish_reason="length")


def test_a_cut_off_scene_is_continued_and_joined(project):
    model = (ScriptedModel().add("planner", PLAN)
             .add("writer", cut("Mara climbed the stair. The road l"))
             .add("writer", Completion(text="ay below, silver. She smiled.")))
    (result,) = run_ticks(project, 1, model, offline_seed=0)
    body = result.scene_path.read_text()
    assert body.rstrip().endswith("The road lay below, silver. She smiled.")
    again = model.calls("writer")[1].messages
    assert again[-2] == {"role": "assistant", "content": "Mara climbed the stair. The road l"}
    assert again[-1]["content"] == write.CONTINUE


def test_a_scene_still_cut_off_is_trimmed_to_a_sentence_and_said(project):
    model = (ScriptedModel().add("planner", PLAN)
             .add("writer", cut("Mara climbed the stair. The road l"))
             .add("writer", cut("ay below. It shone and the"))
             .add("writer", cut(" wind ro")))
    (result,) = run_ticks(project, 1, model, offline_seed=0)
    assert len(model.calls("writer")) == 3
    assert result.scene_path.read_text().rstrip().endswith("The road lay below.")
    assert any("trimmed to its last complete sentence" in n for n in result.notices)
    assert any("under generation.scene_min_words (200)" in n for n in result.notices)


def test_a_cut_off_plan_is_repaired_not_committed_with_less(project):
    full = dict(PLAN, tool_calls=[{"tool": "open_loop", "name": "", "target": "",
                                   "detail": "Who drew the map?"}])
    import json
    text = json.dumps(full)
    model = (ScriptedModel().add("planner", cut(text[:text.index('"tool_calls"') + 20]))
             .add("planner", full))
    (result,) = run_ticks(project, 1, model, offline_seed=0)
    assert len(model.calls("planner")) == 2
    assert "cut off" in model.calls("planner")[1].messages[-1]["content"]
    assert result.plan.tool_calls and result.plan.tool_calls[0].detail == "Who drew the map?"


# -- item 9: prompt logs stop growing with the story -----------------------------------

def messages_kept(project, ticks):
    import json
    return {t: "messages" in json.loads(log_path(project, t, "writer").read_text())
            for t in ticks}


def test_prompt_logs_keep_messages_for_the_last_n_ticks_only(project):
    """Stripped at the checkpoints (every 2 ticks here): the ticks between write only
    their own logs, and a log keeps its messages 2 to 3 ticks."""
    import json
    text = project.project_file.read_text() + ("context:\n  keep_prompt_logs: 2\n"
                                               "generation:\n  checkpoint_summary_interval: 2\n")
    project.project_file.write_text(text)
    run_ticks(project, 5)
    assert messages_kept(project, range(1, 6)) == {1: False, 2: False, 3: True, 4: True,
                                                   5: True}
    run_ticks(project, 1)
    assert messages_kept(project, range(1, 7)) == {1: False, 2: False, 3: False, 4: False,
                                                   5: True, 6: True}
    report = json.loads(log_path(project, 1, "planner").read_text())
    kept = json.loads(log_path(project, 5, "planner").read_text())
    assert set(kept) - set(report) == {"messages"}        # the stripped log keeps its report
    assert report["budget"] == kept["budget"] > 0 and 0 < report["tokens"] <= report["budget"]
    assert [s["name"] for s in report["sections"]][:3] == ["instructions", "bible", "overall"]


def test_prompt_logs_are_kept_for_prompt_log_ticks_ticks_in_all(project):
    text = project.project_file.read_text() + ("context:\n  keep_prompt_logs: 1\n"
                                               "  prompt_log_ticks: 2\n"
                                               "generation:\n  checkpoint_summary_interval: 3\n")
    project.project_file.write_text(text)
    run_ticks(project, 5)
    ticks = sorted({p.name[5:8] for p in project.log_dir.glob("tick_*.json")})
    assert ticks == ["002", "003", "004", "005"]     # the checkpoint at 3 removed tick 1's
    run_ticks(project, 1)
    ticks = sorted({p.name[5:8] for p in project.log_dir.glob("tick_*.json")})
    assert ticks == ["005", "006"]           # the folder holds two ticks, not six


def with_characters(projects_dir, name: str, count: int):
    """A project whose memory holds `count` characters more than the offline story makes."""
    from novel_agent.story.project.folder import create_project
    project = create_project(projects_dir / name, {"name": name, "premise": "A keeper."},
                             config={"llm": {"provider": "offline"},
                                     "context": {"keep_prompt_logs": 1},
                                     "generation": {"checkpoint_summary_interval": 2}})
    for i in range(count):
        (project.memory_dir / "characters" / f"person_{i}.yaml").write_text(
            f"id: person_{i}\nname: Person {i} Quill\ndescription: a harbour hand\n"
            f"first_seen: 1\nlast_seen: 1\n")
    run_ticks(project, 2)
    return project


def test_a_stripped_log_stays_bounded_as_memory_grows(projects_dir):
    """The planner's report lists every character left out: a saved log keeps 50 and a
    count (recent and stripped alike; `novel context --json` shows them all), so a log
    of a big memory is no bigger than one of a middling memory."""
    import json

    from novel_agent.tick.prompt_log import LEFT_OUT_KEPT
    sizes, counts = {}, {}
    for count in (120, 1200):
        project = with_characters(projects_dir, f"p{count}", count)
        path = log_path(project, 1, "planner")
        report, recent = (json.loads(path.read_text()),
                          json.loads(log_path(project, 2, "planner").read_text()))
        left = [i for i in report["items"] if not i["included"]]
        assert "messages" not in report and len(left) == LEFT_OUT_KEPT
        assert report["left_out_not_kept"] > 0                        # counted, not kept
        assert "messages" in recent and recent["left_out_not_kept"] > 0
        sizes[count], counts[count] = path.stat().st_size, report["left_out_not_kept"]
    assert counts[1200] - counts[120] >= 1000, counts
    assert sizes[1200] <= sizes[120] * 1.1, sizes             # ten times the memory


def test_keep_prompt_logs_is_validated(project):
    from novel_agent.errors import ConfigError
    project.project_file.write_text(project.project_file.read_text()
                                    + "context:\n  keep_prompt_logs: 0\n")
    with pytest.raises(ConfigError, match="project.yaml:.*keep_prompt_logs: must be at least 1"):
        project.config()


def with_window(project, window: int) -> None:
    import yaml
    data = yaml.safe_load(project.project_file.read_text())
    data.setdefault("context", {})["window"] = window
    project.project_file.write_text(yaml.safe_dump(data))


def assert_fit(project, stage: str, requests) -> None:
    """Each request's prompt and its answer's room fit the stage's window."""
    from novel_agent.tick.session import Session
    with Session.open(project, project.config(), stand_in=True) as session:
        budget = session.budget(stage)
        for request in requests:
            assert session.counter.count_messages(request.messages) + request.max_tokens \
                <= budget.window - budget.margin


def test_a_continuation_fits_the_window_with_its_answer(project):
    with_window(project, 1330)        # an extractor budget of 274: its prompt (266) just fits
    long_draft = "Mara climbed the stair and counted every step. " * 20 + "The road l"
    model = (ScriptedModel().add("planner", PLAN).add("writer", cut(long_draft))
             .add("writer", Completion(text="ay below. She smiled.")))
    (result,) = run_ticks(project, 1, model, offline_seed=0)
    first, again = model.calls("writer")
    assert_fit(project, "writer", (first, again))
    assert again.max_tokens < first.max_tokens          # the draft left less room
    assert result.scene_path.read_text().rstrip().endswith("The road lay below. She smiled.")


def test_a_repair_request_fits_the_window_with_its_answer(project):
    with_window(project, 1700)
    garbage = "{" + '"title": "x", ' * 200       # ~1,200 tokens of a cut-off answer
    model = ScriptedModel().add("planner", cut(garbage)).add("planner", PLAN)
    run_ticks(project, 1, model, offline_seed=0)
    first, repair = model.calls("planner")
    assert_fit(project, "planner", (first, repair))
    quoted = [m["content"] for m in repair.messages if m["role"] == "assistant"]
    assert quoted == [garbage[:600]]                    # the whole would not have left room
    assert "could not be used" in repair.messages[-1]["content"]
