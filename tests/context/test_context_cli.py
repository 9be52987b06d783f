"""`novel context`, the extractor's long-scene truncation, and model-table warnings."""

from __future__ import annotations

import json

from novel_agent.story.memory.read import load_memory
from novel_agent.text.tokens import TokenCounter
from novel_agent.tick.prompt_log import log_path
from novel_agent.tick.session import Session
from novel_agent.tick.stage_prompts import build_extractor
from tests.support import story_factory as sf
from tests.support.ticking import run_ticks


def test_context_report_as_table_and_json_changes_nothing(project, snapshot, cli):
    run_ticks(project, 4, offline_seed=5)
    before = snapshot(project.root)
    out = cli("context", "-p", "harbour").output
    lines = out.splitlines()
    assert lines[0] == "writer context for tick 5 — model offline (cl100k_base)"
    assert lines[1].startswith("budget  31,044 tokens = min(window 32,768, cap 32,000)")
    assert lines[3].startswith("[") and lines[3].endswith("]") and len(lines[3]) == 52
    assert any(line.startswith("1 recent_full") and "scene_004" in line for line in lines)
    report = json.loads(cli("context", "-p", "harbour", "--json", "--show-prompt").output)
    assert report["stage"] == "writer" and report["tick"] == 5
    assert report["tokens"] <= report["budget"]
    assert TokenCounter("offline").count_messages(report["messages"]) == report["tokens"]
    names = [s["name"] for s in report["sections"]]
    assert names == ["instructions", "bible", "style", "tier3", "cast", "settled", "recent_summaries",
                     "recent_full", "retrieved", "lore", "voices", "avoid", "tools",
                     "intention", "steer"]
    planner = json.loads(cli("context", "--stage", "planner", "--json").output)
    assert planner["stage"] == "planner" and planner["prefix_share"] > 0
    assert snapshot(project.root) == before


def test_extractor_cuts_a_very_long_scene_middle_out(project):
    project.project_file.write_text(project.project_file.read_text()
                                    + "context:\n  window: 4000\n")
    config = project.config()
    prose = sf.prose(6000, 2)
    with Session.open(project, config, stand_in=True) as session:
        built = build_extractor(session, story=project.story(),
                                memory=load_memory(project.memory_dir), plan=sf.plan(1),
                                prose=prose, tick=1)
    assert built.report["tokens"] <= built.report["budget"]
    assert built.report["truncated"] == ["scene"]
    user = built.messages[-1]["content"]
    assert "tokens cut from the middle" in user
    assert prose[:200] in user and prose[-200:] in user


def test_unknown_model_warns_in_one_line(project, projects_dir, cli):
    project.project_file.write_text(project.project_file.read_text()
                                    + "  model: my-own-model\n")
    out = cli("context", "-p", "harbour").output
    warnings = [line for line in out.splitlines() if line.startswith("warning:")]
    assert warnings == ["warning: unknown model 'my-own-model': assuming an 8,192-token window "
                        "(set context.window in project.yaml)"]
    assert "window 8,192" in out


def test_an_unreadable_previous_log_is_reported_not_read_as_no_prefix(project, cli):
    run_ticks(project, 2, offline_seed=5)
    log_path(project, 2, "writer").write_text("{not json")
    report = json.loads(cli("context", "-p", "harbour", "--json").output)
    assert report["prefix_share"] == 0
    [warning] = [w for w in report["warnings"] if "tick_002_writer.json" in w]
    assert "unreadable" in warning and "shared prefix is not measured" in warning
    out = cli("context", "-p", "harbour").output
    assert any(line.startswith("warning: ") and "tick_002_writer.json" in line
               for line in out.splitlines())


def test_context_warns_of_a_malformed_lore_file_as_the_tick_does(project, cli):
    run_ticks(project, 1, offline_seed=5)
    (project.root / "lore").mkdir(exist_ok=True)
    (project.root / "lore" / "broken.yaml").write_text("keys: [unclosed\n")
    out = cli("context", "-p", "harbour", "--stage", "planner").output
    assert "warning: " in out and "broken.yaml" in out and "the file is skipped" in out


def test_an_unscored_item_shown_leaner_says_why_instead_of_a_score(project, cli):
    # issue 37: a book grown at a large window, shown at a small one: its recent scenes are
    # compacted to a line and tier 3 told in short, neither chosen by a score (None)
    run_ticks(project, 20, offline_seed=5)
    project.project_file.write_text(project.project_file.read_text()
                                    + "context:\n  window: 3000\n")
    report = json.loads(cli("context", "-p", "harbour", "--json").output)
    unscored = [i for i in report["items"] if i["included"] and i["form"] == "line"
                and i["score"] is None]
    assert unscored
    lines = cli("context", "-p", "harbour").output.splitlines()
    leaner = lines[lines.index("shown leaner:") + 1:]
    for item in unscored[:3]:
        assert f"  {item['key']}: as its line ({item['reason']})" in leaner
