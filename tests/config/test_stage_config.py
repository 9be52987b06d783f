"""`llm.stages`: a model per stage, any llm key falling back to llm's; its problems named
by the stage's key, file and line; `config show --sources` says what each stage uses."""

from __future__ import annotations

import pytest

from novel_agent.config.settings import load_config, load_yaml_layer
from novel_agent.errors import ConfigError
from tests.support.clirunner import invoke

CHEAP_HELPERS = """\
llm:
  provider: openai
  model: gpt-4o
  base_url: http://127.0.0.1:9/v1
  stages:
    extractor:
      model: gpt-4o-mini
      max_tokens: 500
    summarizer:
      provider: offline
      window: 4096
"""


def config_of(tmp_path, text: str):
    path = tmp_path / "project.yaml"
    path.write_text(text)
    return load_config(load_yaml_layer(path)), path


def test_a_stage_sets_what_it_names_and_falls_back_to_llm_for_the_rest(tmp_path):
    config, _ = config_of(tmp_path, CHEAP_HELPERS)
    extractor, summarizer, writer = (config.for_stage(s) for s in
                                     ("extractor", "summarizer", "writer"))
    assert (extractor.llm.provider, extractor.llm.model, extractor.llm.base_url) == (
        "openai", "gpt-4o-mini", "http://127.0.0.1:9/v1")
    assert config.max_tokens("extractor") == 500 and config.max_tokens("planner") == 600
    assert (summarizer.llm.provider, summarizer.context.window) == ("offline", 4096)
    assert (writer.llm.model, writer.context.window) == ("gpt-4o", 0)
    assert config.for_stage("names").llm.model == "gpt-4o"      # the planner's model


@pytest.mark.parametrize(("yaml", "message"), [
    ("llm:\n  stages:\n    extractr:\n      model: m\n",
     "project.yaml:3: unknown stage 'llm.stages.extractr'"),
    ("llm:\n  stages:\n    extractor:\n      provder: offline\n",
     "project.yaml:4: unknown key 'llm.stages.extractor.provder'"),
    ("llm:\n  stages:\n    extractor:\n      timeout: soon\n",
     "project.yaml:4: llm.stages.extractor.timeout must be float, not 'soon'"),
    ("llm:\n  stages:\n    extractor:\n      provider: nobody\n",
     "project.yaml:4: llm.stages.extractor.provider: must be one of"),
    ("llm:\n  stages:\n    writer:\n      max_tokens: 0\n",
     "project.yaml:4: llm.stages.writer.max_tokens: must be positive"),
    ("llm:\n  stages:\n    writer:\n      prices: {input: 1}\n",
     "project.yaml:4: llm.stages.writer.prices: needs input and output"),
    ("llm:\n  stages:\n    writer: fast\n",
     "project.yaml:3: llm.stages.writer must be a mapping of llm keys"),
])
def test_a_stage_problem_is_one_line_naming_its_key_file_and_line(tmp_path, yaml, message):
    with pytest.raises(ConfigError) as caught:
        config_of(tmp_path, yaml)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_layers_merge_a_stage_key_by_key(tmp_path):
    path = tmp_path / "project.yaml"
    path.write_text("llm:\n  stages:\n    writer:\n      model: big\n      temperature: 0.5\n")
    config = load_config(load_yaml_layer(path), env={"NOVEL_LLM_STAGES": "{writer: {model: huge}}"})
    assert config.llm.stages == {"writer": {"model": "huge", "temperature": 0.5}}


def test_config_show_sources_says_what_each_stage_uses(project):
    project.project_file.write_text(project.project_file.read_text().replace(
        "llm:\n", "llm:\n  model: gpt-4o\n  stages:\n    extractor:\n      provider: offline\n"
        "      model: small\n", 1))
    lines = project.project_file.read_text().splitlines()
    shown = invoke("config", "show", "-p", "harbour", "--sources").output.splitlines()
    line = {l.split(" = ")[0]: l for l in shown}
    assert line["llm.stages.extractor.model"].split()[2:] == [
        '"small"', f"project.yaml:{lines.index('      model: small') + 1}"]
    assert line["llm.stages.extractor.provider"].split()[2] == '"offline"'
    assert line["llm.stages.writer.model"].split()[2:] == [
        '"gpt-4o"', "llm.model", f"(project.yaml:{lines.index('  model: gpt-4o') + 1})"]
    assert len([l for l in shown if l.startswith("llm.stages.")]) == 6 * 3


def test_the_configuration_reference_lists_llm_stages():
    from novel_agent.config.reference import markdown
    assert any(line.startswith("| `llm.stages` |") and "max_tokens" in line
               for line in markdown().splitlines())
