"""Configuration layers: defaults < preset < project.yaml < environment < flags."""

from __future__ import annotations

import pytest

from novel_agent.config.layers import list_presets, load_config, load_preset
from novel_agent.errors import ConfigError
from tests.support.clirunner import invoke


def test_presets_carry_the_seed_strategy_values():
    expected = {"conservative": (1, 2, 20), "balanced": (2, 3, 10), "aggressive": (3, 5, 5)}
    for name, (full, summaries, interval) in expected.items():
        gen = load_config(preset=name).generation
        assert (gen.full_text_scenes_count, gen.summary_scenes_count,
                gen.checkpoint_summary_interval) == (full, summaries, interval)
    assert {"conservative", "balanced", "aggressive"} <= set(list_presets())


def test_default_preset_is_balanced():
    config = load_config()
    assert config.preset == "balanced"
    assert config.generation.full_text_scenes_count == 2


def test_each_layer_overrides_the_last(project):
    text = project.project_file.read_text().replace("preset: balanced", "preset: aggressive")
    project.project_file.write_text(text + "  timeout: 30\ngeneration:\n"     # llm: is last
                                    "  summary_scenes_count: 7\n  max_tools_per_tick: 4\n")
    config = project.config(env={"NOVEL_GENERATION_MAX_TOOLS_PER_TICK": "2",
                                 "NOVEL_LLM_MODEL": "gpt-4o"},
                            flags={"llm.model": "llama3.1"})
    assert config.preset == "aggressive"
    assert config.generation.full_text_scenes_count == 3      # from the preset
    assert config.generation.summary_scenes_count == 7        # project.yaml beats preset
    assert config.generation.max_tools_per_tick == 2          # env beats project.yaml
    assert config.llm.model == "llama3.1"                     # flags beat env
    assert config.llm.timeout == 30.0 and isinstance(config.llm.timeout, float)


def test_unknown_key_names_file_key_and_line(project):
    project.project_file.write_text(project.project_file.read_text()
                                    + "generation:\n  full_text_scenes: 2\n")
    with pytest.raises(ConfigError) as info:
        project.config()
    err = info.value
    assert err.key == "generation.full_text_scenes"
    assert err.file == str(project.project_file)
    lines = project.project_file.read_text().splitlines()
    assert lines[err.line - 1].strip().startswith("full_text_scenes")
    assert "project.yaml:" in str(err) and "full_text_scenes" in str(err)


def test_unknown_section_is_an_error(project):
    project.project_file.write_text(project.project_file.read_text() + "generaton:\n  x: 1\n")
    with pytest.raises(ConfigError, match="unknown key 'generaton'"):
        project.config()


def test_wrong_type_names_key_and_line(project):
    project.project_file.write_text(project.project_file.read_text()
                                    + "generation:\n  recent_scenes_count: many\n")
    with pytest.raises(ConfigError) as info:
        project.config()
    assert info.value.key == "generation.recent_scenes_count"
    assert "must be int" in str(info.value)
    assert info.value.line == len(project.project_file.read_text().splitlines())


def test_bool_is_not_an_int():
    from novel_agent.config.layers import Layer, merge_layers
    with pytest.raises(ConfigError, match="must be int"):
        merge_layers([Layer("x.yaml", {"generation": {"max_tools_per_tick": True}})])


def test_range_errors_point_at_their_layer():
    from novel_agent.config.layers import Layer, merge_layers
    with pytest.raises(ConfigError) as info:
        merge_layers([Layer("p.yaml", {"generation": {"checkpoint_summary_interval": 0}},
                            {("generation", "checkpoint_summary_interval"): 4})])
    assert info.value.file == "p.yaml" and info.value.line == 4


def test_invalid_yaml_gives_a_clear_error_and_changes_nothing(project, projects_dir, snapshot):
    project.project_file.write_text(project.project_file.read_text() + "generation: [1, 2\n")
    before = snapshot(project.root)
    result = invoke("tick", "-p", "harbour")
    assert result.exit_code == 1
    assert "project.yaml" in result.output and "invalid YAML" in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert snapshot(project.root) == before


def test_unknown_key_via_cli_changes_nothing(project, snapshot):
    project.project_file.write_text(project.project_file.read_text() + "  temprature: 1\n")
    before = snapshot(project.root)
    result = invoke("tick", "-p", "harbour")
    assert result.exit_code == 1
    assert "llm.temprature" in result.output and "project.yaml:" in result.output
    assert snapshot(project.root) == before


def test_env_values_are_parsed_and_checked():
    config = load_config(env={"NOVEL_GENERATION_ENABLE_FACT_EXTRACTION": "false",
                              "NOVEL_LLM_BASE_URL": "http://127.0.0.1:1/v1"})
    assert config.generation.enable_fact_extraction is False
    assert config.llm.base_url == "http://127.0.0.1:1/v1"
    with pytest.raises(ConfigError, match="environment"):
        load_config(env={"NOVEL_LLM_TIMEOUT": "soon"})


def test_unknown_preset_lists_the_known_ones():
    with pytest.raises(ConfigError, match="balanced"):
        load_preset("turbo")




def project_yaml_examples() -> list[tuple[str, str]]:
    """Every `# project.yaml` block of the docs' pages and of the README: (where, text)."""
    import re

    from tests.support.repo import DOCS, README

    pages = [README, *sorted(DOCS.rglob("*.md"))]
    return [(f"{p.name}#{n}", text) for p in pages for n, text in enumerate(
        re.findall(r"```yaml\n# project.yaml\n(.*?)```", p.read_text(), re.S))]


@pytest.mark.parametrize("where, text", project_yaml_examples(),
                         ids=[where for where, _ in project_yaml_examples()])
def test_every_project_yaml_the_docs_show_is_a_valid_configuration(where, text, tmp_path):
    """Every key a docs page's project.yaml example shows is one the loader knows, with a
    value it takes (an unknown key or a bad value is an error naming it)."""
    from novel_agent.story.project.folder import Project

    text = text.replace("premise: ...", "premise: x").replace("…", "x")
    (tmp_path / "project.yaml").write_text(text)
    Project(tmp_path).config()


def test_the_docs_show_project_yaml_examples():
    where = [w for w, _ in project_yaml_examples()]
    assert any(w.startswith("getting-started.md") for w in where), where


def test_a_share_mapping_overrides_key_by_key_and_is_checked():
    config = load_config(flags={"context.planner_shares": {"loops": 0.2}})
    assert config.context.planner_shares["loops"] == 0.2
    assert config.context.planner_shares["characters"] == 0.08    # the default, kept
    with pytest.raises(ConfigError, match="unknown section 'villains'"):
        load_config(flags={"context.planner_shares": {"villains": 0.1}})
    with pytest.raises(ConfigError, match="adding up to at most 1"):
        load_config(flags={"context.extractor_shares": {"plan": 0.9, "loops": 0.5}})


def test_a_key_given_twice_names_the_file_and_the_second_line(project, snapshot):
    text = project.project_file.read_text()
    assert "llm:\n  provider: offline\n" in text
    project.project_file.write_text(text + "llm:\n  model: gpt-4o\n")    # YAML keeps the last
    line = len(project.project_file.read_text().splitlines()) - 1
    first = text.splitlines().index("llm:") + 1
    before = snapshot(project.root)
    result = invoke("tick", "-p", "harbour")
    assert result.exit_code == 1
    assert result.output == (f"Error: {project.project_file}:{line}: duplicate key 'llm' "
                             f"(first on line {first}): keep one, merged by hand\n")
    assert snapshot(project.root) == before


def test_a_nested_key_given_twice_in_a_preset_is_an_error(tmp_path):
    (tmp_path / "mine.yaml").write_text("generation:\n  recent_scenes_count: 3\n"
                                        "  summary_scenes_count: 2\n  recent_scenes_count: 9\n")
    with pytest.raises(ConfigError) as info:
        load_preset("mine", tmp_path)
    err = info.value
    assert (err.file, err.key, err.line) == (str(tmp_path / "mine.yaml"),
                                             "generation.recent_scenes_count", 4)
    # the same key in two different mappings is no duplicate
    (tmp_path / "fine.yaml").write_text("llm:\n  model: a\ngeneration:\n  recent_scenes_count: 3\n"
                                        "context:\n  window: 9000\n")
    assert load_preset("fine", tmp_path).values["context"] == {"window": 9000}
