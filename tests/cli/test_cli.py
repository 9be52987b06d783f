"""The CLI, through CliRunner: output, errors, help text, the command reference."""

from __future__ import annotations

import functools
import os
import subprocess
import sys

import click
import pytest

from novel_agent.cli import cli as novel
from tests.support.repo import ROOT, hooks, page
from tests.support.ticking import run_ticks


def all_commands(group=novel, prefix=()):
    for name, command in group.commands.items():
        path = prefix + (name,)
        yield path, command
        if isinstance(command, click.Group):
            yield from all_commands(command, path)


def test_new_tick_status_scenes(projects_dir, cli):
    out = cli("new", "harbour", "--premise", "A keeper finds a map.", "--provider",
              "offline").output
    assert f"Created project 'harbour' at {projects_dir / 'harbour'}" in out
    out = cli("tick", "-n", "2").output
    assert out.startswith("model: offline model")
    assert "tick 1 of harbour" in out and "tick 2 of harbour" in out
    for stage in ("plan", "write", "extract", "commit"):
        assert f"  {stage}" in out
    assert "harbour/scenes/scene_002.md" in out
    status = cli("status", "-p", "harbour").output
    assert "ticks       2  (2 scenes" in status
    assert "offline" in status
    listing = cli("scenes", "list").output.splitlines()
    assert [line.split()[0] for line in listing] == ["1", "2"]
    shown = cli("scenes", "show", "2").output
    assert shown.startswith("# ") and "(scene 2," in shown
    tree = cli("inspect").output
    assert "scenes/  (2 files)" in tree and "plans/  (2 files)" in tree


def test_new_from_a_foundation_file(projects_dir, tmp_path, cli):
    foundation = tmp_path / "f.yaml"
    foundation.write_text("premise: Two sisters run a ferry.\ngenre: literary\n"
                          "tone: quiet\nsetting: a river delta\nprotagonist: Ada\n")
    cli("new", "ferry", "--foundation", str(foundation), "--model", "gpt-4o")
    text = (projects_dir / "ferry" / "project.yaml").read_text()
    assert "Two sisters run a ferry." in text and "protagonist: Ada" in text
    assert "model: gpt-4o" in text


def test_bad_foundation_names_the_file(projects_dir, tmp_path, cli):
    foundation = tmp_path / "f.yaml"
    foundation.write_text("premis: typo\n")
    result = cli("new", "x", "--foundation", str(foundation), ok=False)
    assert result.exit_code == 1 and "f.yaml" in result.output and "premis" in result.output
    assert not (projects_dir / "x").exists()


def test_new_refuses_an_existing_project(projects_dir, cli):
    cli("new", "a")
    result = cli("new", "a", ok=False)
    assert result.exit_code == 1 and "already holds a project" in result.output


def test_unknown_preset_writes_nothing(projects_dir, cli):
    result = cli("new", "a", "--preset", "turbo", ok=False)
    assert "unknown preset 'turbo'" in result.output
    assert not (projects_dir / "a").exists()


def test_missing_project_is_one_clear_line(projects_dir, cli):
    result = cli("tick", "-p", "nowhere", ok=False)
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        f"Error: no project 'nowhere': neither a folder with project.yaml nor a name under "
        f"{projects_dir}"]


def test_project_errors_carry_the_path(projects_dir):
    from novel_agent.errors import ProjectError
    from novel_agent.story.project.folder import create_project, find_project
    with pytest.raises(ProjectError) as info:
        find_project(None, projects_dir, {"NOVEL_PROJECTS_DIR": str(projects_dir)})
    assert info.value.path == str(projects_dir)
    create_project(projects_dir / "one", {"name": "one"})
    with pytest.raises(ProjectError) as info:
        create_project(projects_dir / "one", {"name": "one"})
    assert info.value.path == str(projects_dir / "one")


def test_several_projects_need_a_choice(projects_dir, cli):
    cli("new", "a")
    cli("new", "b")
    (projects_dir / ".novel-last").unlink()          # none remembered (see test_first_hour)
    result = cli("status", ok=False)
    assert "several projects" in result.output and "-p NAME" in result.output


def test_project_in_current_directory_is_found(projects_dir, monkeypatch, cli):
    cli("new", "a", "--provider", "offline")
    cli("new", "b", "--provider", "offline")
    monkeypatch.chdir(projects_dir / "b" / "scenes")
    assert "tick 1 of b" in cli("tick").output


def test_scene_that_does_not_exist(projects_dir, cli):
    cli("new", "a")
    result = cli("scenes", "show", "4", ok=False)
    assert "no scene 4 in a" in result.output


@functools.cache
def command_reference() -> str:
    """docs/reference/commands.md as the site shows it: the commands' reference the site's
    hook makes from them with mkdocs-click's generator (the docs extra)."""
    pytest.importorskip("mkdocs_click", reason="the docs extra installs mkdocs-click: "
                        "pip install -e '.[docs]'")
    site = hooks()
    return site.on_page_markdown(page("reference/commands.md"))


@pytest.mark.parametrize("path", [p for p, _ in all_commands()], ids=" ".join)
def test_every_command_has_help_and_is_in_the_reference(path, cli):
    command = novel
    for name in path:
        command = command.commands[name]
    assert command.help and len(command.help.strip()) > 20
    out = cli(*path, "--help").output
    assert out.startswith("Usage: ")
    reference = command_reference()
    assert f"# novel {' '.join(path)} {{ #novel-{'-'.join(path)} " in reference
    assert command.help.strip().splitlines()[0] in reference


def test_the_command_reference_reads_as_a_page():
    """The reference's examples are code blocks (not lines Markdown runs together), and no
    option's default is Click's `Sentinel.UNSET`."""
    reference = command_reference()
    assert "```sh\nnovel tick -p harbour -n 3\nnovel tick --provider openai" in reference
    assert "UNSET" not in reference and "<!-- command-reference -->" not in reference
    assert "| `-n` | integer range (`1` and above) | How many ticks (scenes) to run. | `1` |" \
        in reference


def test_every_model_call_is_logged_in_the_index(projects_dir, cli):
    import sqlite3
    cli("new", "harbour", "--provider", "offline")
    cli("tick", "-n", "2")
    db = sqlite3.connect(projects_dir / "harbour" / ".novel" / "index.db")
    rows = db.execute("SELECT tick, stage, prompt_tokens > 0, completion_tokens > 0 "
                      "FROM usage ORDER BY id").fetchall()
    assert rows == [(1, "planner", 1, 1), (1, "writer", 1, 1), (1, "extractor", 1, 1),
                    (2, "planner", 1, 1), (2, "writer", 1, 1), (2, "extractor", 1, 1)]


def test_scenes_show_leaves_out_what_a_scene_does_not_say(project, cli):
    from novel_agent.files import atomic_write
    atomic_write(project.scene_path(1), "---\ntitle: Chapter One\n---\n\nIt rained.\n")
    shown = cli("scenes", "show", "1", "-p", str(project.root))
    assert shown.stdout.splitlines()[0] == "# Chapter One  (scene 1)"


def test_a_command_on_an_offline_book_never_imports_the_openai_sdk(projects_dir):
    """The SDK takes most of a second to import: `novel --help`, and a tick on a model that
    is not behind an OpenAI-compatible server, do without it (it comes with a model or an
    embedder that speaks to one)."""
    import subprocess
    import sys
    code = ("import sys; from click.testing import CliRunner; from novel_agent.cli import cli;"
            "r = CliRunner().invoke(cli, ['new', 'quiet', '--premise', 'A keeper.', '--provider',"
            " 'offline']); assert r.exit_code == 0, r.output;"
            "r = CliRunner().invoke(cli, ['tick', '-p', 'quiet']); assert r.exit_code == 0, "
            "r.output; print(sorted(m for m in sys.modules if m.split('.')[0] == 'openai')[:3])")
    done = subprocess.run([sys.executable, "-c", code], cwd=projects_dir.parent,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"


def test_status_lists_the_overdue_loops_reading_the_tick_once(project, monkeypatch):
    """`novel status` on a long book listed its scenes again for every open loop."""
    from novel_agent.files import dump_yaml
    from novel_agent.reports.status import project_status
    from novel_agent.story.project.folder import Project
    from tests.support.ticking import run_ticks
    run_ticks(project, 3)
    for n in range(40):
        (project.memory_dir / "loops" / f"old_{n}.yaml").write_text(dump_yaml({
            "description": f"question {n}?", "opened_in": 1, "status": "open", "scenes": [1]}))
    asked: list[int] = []
    real = Project.tick
    monkeypatch.setattr(Project, "tick", lambda self: asked.append(1) or real(self))
    status = project_status(project, overdue_after=1)
    assert {"old_0", "old_39"} <= {l["id"] for l in status.overdue}
    assert len(asked) == 1


@pytest.mark.parametrize("args", [["status"], ["scenes", "list"], ["log"]])
def test_a_reader_that_stops_early_ends_the_command_quietly(project, args):
    """`novel status | head -1`: the pipe closed before the command writes (the reader gone
    before the interpreter is up) gives exit 1 and no "Error: Broken pipe"."""
    run_ticks(project, 2)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen([sys.executable, "-c", "from novel_agent.cli import main; main()",
                              *args, "-p", str(project.root)], cwd=ROOT, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    child.stdout.close()
    _, stderr = child.communicate(timeout=120)
    assert child.returncode == 1 and stderr.decode() == ""


def test_status_names_only_the_pov_and_place_a_scene_has(project, cli):
    run_ticks(project, 1)
    project.scene_path(2).write_text("---\ntitle: Imported\n---\nMara climbed the tower.\n")
    assert 'last scene  2: "Imported"\n' in cli("status", "-p", "harbour").output
    project.scene_path(3).write_text("---\ntitle: Hers\npov: Mara\n---\nThe lamp was out.\n")
    assert 'last scene  3: "Hers"  (pov Mara)\n' in cli("status", "-p", "harbour").output


def test_scenes_show_mends_prints_each_mended_sentence_before_and_after(projects_dir, cli):
    """`novel scenes show N --mends` prints what the mend did, from the plan record (issue
    51: 26 sentences mended and nothing said which; fails on main: no --mends)."""
    from novel_agent.files import dump_yaml, read_yaml

    cli("new", "harbour", "--premise", "A keeper finds a map.", "--provider", "offline")
    cli("tick", "-n", "2")
    assert cli("scenes", "show", "2", "--mends").output.endswith(
        "\nmends: 0 (no sentence was written again)\n")
    plan = projects_dir / "harbour" / "plans" / "plan_002.yaml"
    record = read_yaml(plan)
    record["prose"] = {"mended": 1, "mends": [{"before": "She felt a sense of unease.",
                                               "after": "She felt uneasy."}]}
    plan.write_text(dump_yaml(record))
    shown = cli("scenes", "show", "2", "--mends").output
    assert shown.endswith("\nmends: 1\n  - She felt a sense of unease.\n  + She felt uneasy.\n")
    assert "mends:" not in cli("scenes", "show", "2").output
