"""`llm.stages`: a model per stage, any llm key falling back to llm's; its problems named
by the stage's key, file and line; `config show --sources` says what each stage uses."""

from __future__ import annotations

import pytest

from novel_agent.config.layers import load_config, load_yaml_layer
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


def test_a_stage_on_another_provider_takes_none_of_llms_provider_keys(tmp_path, project):
    config, _ = config_of(tmp_path, (
        "llm:\n  provider: openai\n  model: gpt-4o\n  base_url: http://127.0.0.1:9/v1\n"
        "  api_key_env: MY_OPENAI_KEY\n  prices: {input: 9, output: 9}\n  timeout: 30\n"
        "  stages:\n    writer:\n      provider: anthropic\n"
        "    extractor:\n      provider: local\n"
        "    summarizer:\n      provider: openai\n      model: gpt-4o-mini\n"))
    writer, extractor, summarizer = (config.for_stage(s) for s in
                                     ("writer", "extractor", "summarizer"))
    # gpt-4o is no Anthropic model, nor is the OpenAI server an Anthropic endpoint
    assert (writer.llm.model, writer.llm.base_url, writer.llm.api_key_env,
            writer.llm.prices) == ("", "", "OPENAI_API_KEY", {})
    assert writer.llm.timeout == 30                     # not a provider's: llm's still
    assert (extractor.llm.model, extractor.llm.base_url) == ("", "")
    # the same provider as llm's: llm's server, key and prices
    assert (summarizer.llm.model, summarizer.llm.base_url, summarizer.llm.api_key_env,
            summarizer.llm.prices) == ("gpt-4o-mini", "http://127.0.0.1:9/v1", "MY_OPENAI_KEY",
                                       {"input": 9, "output": 9})
    auto, _ = config_of(tmp_path, "llm:\n  base_url: http://127.0.0.1:9/v1\n  model: m\n"
                                  "  stages:\n    writer:\n      provider: openai\n")
    assert auto.for_stage("writer").llm.model == "m"     # auto with a base_url is openai

    project.project_file.write_text(project.project_file.read_text().replace(
        "llm:\n", "llm:\n  model: gpt-4o\n  stages:\n    extractor:\n      provider: anthropic\n",
        1))
    shown = invoke("config", "show", "-p", "harbour", "--sources").output.splitlines()
    line = {l.split(" = ")[0]: l for l in shown}
    assert line["llm.stages.extractor.model"].split()[2] == '"claude-sonnet-4-6"'
    assert "the anthropic provider's default" in line["llm.stages.extractor.model"]


def test_a_stage_on_a_server_of_its_own_is_not_sent_llms_key(tmp_path, monkeypatch):
    from novel_agent.models import get_model
    config, _ = config_of(tmp_path, (
        "llm:\n  provider: openai\n  model: gpt-4o\n"
        "  stages:\n    extractor:\n      base_url: http://127.0.0.1:11434/v1\n"
        "      model: llama3.1\n"
        "    summarizer:\n      base_url: http://127.0.0.1:8080/v1\n"
        "      api_key_env: SERVER_KEY\n"))
    env = {"OPENAI_API_KEY": "sk-openai-secret", "SERVER_KEY": "sk-server"}
    extractor, summarizer, writer = (get_model(config.for_stage(s), env)
                                     for s in ("extractor", "summarizer", "writer"))
    # the home server is never sent the OpenAI key; a server given its own key gets it
    assert extractor._key != "sk-openai-secret" and config.for_stage("extractor").llm.api_key_env == ""
    assert summarizer._key == "sk-server" and writer._key == "sk-openai-secret"


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
    assert list(config.llm.stages) == ["writer"]
    assert config.llm.stage_keys("writer") == {"model": "huge", "temperature": 0.5}


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
