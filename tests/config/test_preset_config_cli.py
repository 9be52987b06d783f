"""`novel preset ...` and `novel config show`: user presets beside the projects, names
checked at the door, edits saved only when valid, and where each setting came from."""

from __future__ import annotations

import sys

import pytest

from novel_agent.errors import ConfigError
from tests.support.clirunner import invoke


def test_new_list_show_and_a_project_that_uses_it(project, projects_dir):
    result = invoke("preset", "new", "slow", "--from", "conservative")
    path = projects_dir / "presets" / "slow.yaml"
    assert result.output == f"made preset slow: {path} (edit it with `novel preset edit slow`)\n"
    lines = invoke("preset", "list").output.splitlines()
    assert [line.split()[:2] for line in lines] == [
        ["aggressive", "built"], ["balanced", "built"], ["conservative", "built"],
        ["slow", "yours"]]
    assert invoke("preset", "show", "slow").output.startswith(f"# {path}\n# slow: made from "
                                                              "conservative\n")
    project.project_file.write_text(project.project_file.read_text().replace(
        "preset: balanced", "preset: slow"))
    shown = invoke("config", "show", "-p", "harbour", "--sources").output
    assert "generation.checkpoint_summary_interval = 20" in shown
    line = next(l for l in shown.splitlines() if l.startswith("generation.max_tools_per_tick"))
    number = path.read_text().splitlines().index("  max_tools_per_tick: 2") + 1
    assert line.endswith(f"{path}:{number}")


@pytest.mark.parametrize("name", ["../etc/passwd", "slow.yaml", "a/b", "models", ""])
def test_preset_names_are_names_not_paths(projects_dir, name):
    result = invoke("preset", "new", name)
    assert result.exit_code == 1 and "is not a preset name" in result.output
    assert not (projects_dir / "presets").exists()


def test_a_project_naming_a_path_as_preset_is_refused(project):
    project.project_file.write_text(project.project_file.read_text().replace(
        "preset: balanced", "preset: ../../secrets"))
    with pytest.raises(ConfigError, match="not a preset name"):
        project.config()


def test_built_in_presets_are_copied_not_edited(projects_dir):
    result = invoke("preset", "edit", "balanced")
    assert result.exit_code == 1 and "novel preset new my-balanced --from balanced" in result.output
    assert invoke("preset", "new", "balanced").exit_code == 1


def test_validate_names_file_and_line(projects_dir, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("generation:\n  max_tools_per_tick: 3\n  scene_max_words: many\n")
    result = invoke("preset", "validate", str(bad))
    assert result.exit_code == 1
    assert f"error  {bad}:3: generation.scene_max_words must be int, not 'many'" in result.output
    ok = invoke("preset", "validate")
    assert ok.exit_code == 0 and ok.output.count("ok ") == 3


def test_edit_reopens_until_valid_and_saves_only_then(projects_dir, tmp_path):
    invoke("preset", "new", "slow", "--from", "balanced")
    path = projects_dir / "presets" / "slow.yaml"
    original = path.read_text()
    editor = tmp_path / "editor.py"     # 1st save: a bad value; 2nd save: a good one
    editor.write_text(
        "import sys, pathlib\n"
        f"count = pathlib.Path({str(tmp_path / 'count')!r})\n"
        "n = int(count.read_text()) if count.exists() else 0\n"
        "count.write_text(str(n + 1))\n"
        "f = pathlib.Path(sys.argv[1])\n"
        "value = 'lots' if n == 0 else '7'\n"
        "f.write_text(f.read_text().replace('max_tools_per_tick: 3', 'max_tools_per_tick: ' + value)"
        ".replace('max_tools_per_tick: lots', 'max_tools_per_tick: ' + value))\n")
    env = {"EDITOR": f"{sys.executable} {editor}", "VISUAL": None}
    result = invoke("preset", "edit", "slow", env=env, input="y\n")
    assert "not saved: " in result.output and "max_tools_per_tick must be int" in result.output
    assert result.output.endswith(f"saved {path}\n")
    assert path.read_text() == original.replace("max_tools_per_tick: 3", "max_tools_per_tick: 7")
    (tmp_path / "count").unlink()
    path.write_text(original)
    declined = invoke("preset", "edit", "slow", env=env, input="n\n")
    assert declined.exit_code == 1 and "slow left as it was" in declined.output
    assert path.read_text() == original


def test_config_show_says_where_each_value_came_from_and_never_the_key(project):
    env = {"OPENAI_API_KEY": "sk-very-secret", "NOVEL_LLM_SEED": "4"}
    out = invoke("config", "show", "-p", "harbour", "--sources", env=env).output
    assert "sk-very-secret" not in out
    lines = {l.split(" = ")[0]: l for l in out.splitlines()}
    number = project.project_file.read_text().splitlines().index("  provider: offline") + 1
    assert lines["llm.provider"].split() == ["llm.provider", "=", '"offline"',
                                             f"project.yaml:{number}"]
    assert lines["llm.seed"].split()[-2:] == ["environment", "(NOVEL_LLM_SEED)"]
    assert lines["llm.api_key_env"].split()[2:] == ['"OPENAI_API_KEY"', "built-in", "default"]
    assert lines["daemon.max_failures"].split()[2] == "5"
    plain = invoke("config", "show", "-p", "harbour").output
    assert 'llm.temperature = 0.8\n' in plain and "project.yaml" not in plain
