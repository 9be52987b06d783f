"""Issue 21's "also found" list: what a new user met in the first hour, each fixed."""

from __future__ import annotations

import pytest

from novel_agent.config.layers import load_config, load_yaml_layer
from novel_agent.errors import ConfigError, ProjectError
from novel_agent.reports.costs import DEFAULT_RUN_CEILING, breakdown, run_terms
from novel_agent.reports.stats import collect_stats
from novel_agent.reports.usage import project_rows
from novel_agent.story.project.folder import create_project, find_project
from novel_agent.story.scenes import load_scenes
from tests.support.clirunner import invoke
from tests.support.repo import ROOT
from tests.support.ticking import run_ticks


def test_yaml_errors_name_the_line_the_bracket_opened(tmp_path):
    brace = tmp_path / "brace.yaml"
    brace.write_text("premise: x\ngenre: y\ntone: z\nllm: {temperature: 0.5\ndaemon: {}\n")
    bracket = tmp_path / "bracket.yaml"
    bracket.write_text("a: 1\nb: 2\nc: 3\nd: 4\ne: 5\nlore: [one, two\n")
    for path, line, mark in ((brace, 4, "{"), (bracket, 6, "[")):
        try:
            load_yaml_layer(path)
        except ConfigError as exc:
            assert exc.line == line
            assert f"the '{mark}' opened here is never closed" in str(exc)
        else:
            raise AssertionError("no error")


def test_status_shows_what_it_can_with_a_broken_project_yaml(project):
    run_ticks(project, 1)
    project.project_file.write_text(project.project_file.read_text() + "llm: [a, b\n")
    result = invoke("status", "-p", str(project.root))
    assert result.exit_code == 1
    assert result.output.startswith(f"project     harbour  ({project.root})\nticks       1  (1 scenes")
    assert "daemon      not running" in result.output
    assert f"Error: {project.project_file}:" in result.output
    assert "never closed" in result.output and "tick and run stop on it" in result.output


def test_a_run_on_a_priced_model_has_a_ceiling_unless_told_and_says_its_pace():
    priced = load_config(flags={"llm.provider": "openai", "llm.model": "gpt-4o-mini"})
    ceiling, line = run_terms(priced, None)
    assert ceiling == DEFAULT_RUN_CEILING
    assert line == ("pace: ticks back to back (daemon.interval 0; --interval S to space them); "
                    "this run stops before it spends more than $1.00 (the default on a priced "
                    "model; --max-cost D to change it, 0 for none)")
    assert run_terms(priced, 0.0) == (0.0, "pace: ticks back to back (daemon.interval 0; "
                                           "--interval S to space them); no cost ceiling "
                                           "(--max-cost 0)")
    told = load_config(flags={"llm.provider": "openai", "llm.model": "gpt-4o-mini",
                              "llm.max_cost": 5.0, "daemon.interval": 30})
    assert run_terms(told, None) == (0.0, "pace: a tick every 30 s; the project stops at "
                                          "llm.max_cost $5.00")
    offline = load_config(flags={"llm.provider": "offline"})
    assert run_terms(offline, None)[0] == 0.0


def test_with_two_projects_the_last_used_is_chosen_and_said(projects_dir):
    for name in ("demo", "harbour"):
        assert invoke("new", name, "--premise", "A keeper.", "--provider", "offline").exit_code == 0
    result = invoke("scenes", "list")
    assert result.exit_code == 0
    assert ("using project 'harbour' (the last one used under "
            f"{projects_dir}; -p NAME for another: demo)") in result.output
    invoke("scenes", "list", "-p", "demo")
    assert "using project 'demo'" in invoke("scenes", "list").output


def test_a_typo_gets_did_you_mean_and_no_project_mentions_p(projects_dir):
    invoke("new", "harbour", "--premise", "A keeper.", "--provider", "offline")
    result = invoke("status", "-p", "harbur")
    assert result.exit_code == 1 and "did you mean 'harbour'?" in result.output
    (projects_dir / "harbour" / "project.yaml").unlink()
    result = invoke("status")
    assert "or name one with -p PATH" in result.output


def test_p_inside_the_projects_folder_or_a_project_looks_there(tmp_path, monkeypatch):
    """No $NOVEL_PROJECTS_DIR: run inside projects/ the projects folder would be
    projects/projects, and inside projects/harbour, projects/harbour/projects."""
    monkeypatch.delenv("NOVEL_PROJECTS_DIR", raising=False)
    base = tmp_path / "projects"
    for name in ("harbour", "mill"):
        create_project(base / name, {"name": name, "premise": "A keeper."})
    monkeypatch.chdir(base)
    assert find_project("harbour", base, {}).root == base / "harbour"
    with pytest.raises(ProjectError, match=f"nor a name under {base}; did you mean 'harbour'"):
        find_project("harbor", base, {})
    inside = base / "harbour" / "scenes"
    monkeypatch.chdir(inside)
    assert find_project("harbour", inside, {}).root == base / "harbour"
    assert find_project("mill", inside, {}).root == base / "mill"
    with pytest.raises(ProjectError, match=f"nor a name under {base}; did you mean 'mill'"):
        find_project("mil", inside, {})


def test_new_with_openai_and_no_key_says_what_is_missing(projects_dir, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    result = invoke("new", "paid", "--premise", "A keeper.", "--provider", "openai")
    assert result.exit_code == 0
    assert ("Before the first tick: llm.provider is openai but $OPENAI_API_KEY is not set: "
            "export OPENAI_API_KEY=..., or set llm.base_url") in result.output
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    assert "Before the first tick" not in invoke("new", "paid2", "--premise", "A.",
                                                 "--provider", "openai").output


def test_context_says_its_plan_is_a_stand_in_not_an_offline_answer(project):
    run_ticks(project, 1)
    out = invoke("context", "-p", str(project.root)).output
    assert "offline model" not in out
    assert ("note: no model was called: the plan (and prose) this prompt is built around are "
            "stand-ins drawn from the story's memory") in out


def test_export_keeps_scene_titles_and_one_lore_entry_is_singular(project):
    run_ticks(project, 3)
    invoke("export", "-p", str(project.root), "--chapters", "none", "-o", "book.md")
    book = (project.root.parent.parent / "book.md").read_text()
    titles = [s.read_text().split("title: ", 1)[1].split("\n", 1)[0]
              for s in sorted(project.scenes_dir.glob("scene_*.md"))]
    assert all(f"### {t}" in book for t in titles)
    invoke("lore", "add", "The brass locket", "--key", "locket", "--content", "Hers.",
           "-p", str(project.root))
    assert invoke("lore", "check", "-p", str(project.root)).output == "1 lore entry, valid\n"


def test_stats_and_usage_count_the_same_prompt_tokens(project):
    run_ticks(project, 3)
    rows = project_rows(project)
    stats = collect_stats(project, project.config(), rows)
    by_stage = breakdown(rows, "stage")
    for stage in ("planner", "writer", "extractor"):
        assert sum(t.prompt.get(stage, 0) for t in stats.ticks) == by_stage[stage].prompt_tokens


def test_the_demo_installs_quietly():
    demo = (ROOT / "scripts" / "demo").read_text()
    assert "novel models install --quiet" in demo


DEMO_STEPS = ("novel new demo --foundation scripts/demo.yaml", "novel outline -p demo",
              "novel run -p demo --ticks 3", "novel status -p demo")


def test_the_demo_makes_an_outline_and_writes_from_it_and_a_finished_story_stops_it_not(
        projects_dir):
    """The demo's commands, in its order, on the offline model: the outline, 3 scenes of it,
    3 more on a second run, and a run on the finished story says so and exits 0."""
    demo = (ROOT / "scripts" / "demo").read_text()
    places = [demo.find(step) for step in DEMO_STEPS]
    assert -1 not in places and places == sorted(places)
    invoke("new", "demo", "--foundation", str(ROOT / "scripts" / "demo.yaml"), "--provider",
           "offline", ok=True)
    project_yaml = projects_dir / "demo" / "project.yaml"     # the 1.5B's sizes (OUTLINE_AUTO)
    project_yaml.write_text(project_yaml.read_text() + "outline:\n  chapters: 3\n"
                            "  beats_per_chapter: 2\n  scenes_per_chapter: 2\n")
    assert "wrote demo/outline/outline.yaml: 3 acts, 3 chapters, 6 beats, 6 scenes planned" \
        in invoke("outline", "-p", "demo", ok=True).output
    for _ in range(2):
        invoke("run", "-p", "demo", "--ticks", "3", ok=True)
    scenes = load_scenes(projects_dir / "demo" / "scenes")
    assert [s.beat for s in scenes] == ["1.1", "1.2", "2.1", "2.2", "3.1", "3.2"]
    again = invoke("run", "-p", "demo", "--ticks", "3", ok=True).output
    assert "the book is finished: 3 chapters, 6 scenes" in again
    assert "outline     finished: 3 chapters, 6 scenes" in invoke("status", "-p", "demo",
                                                                   ok=True).output
