"""Every number a setting takes has its bounds declared (config/settings.py), and a value
out of them, NaN or infinity among them, is one line naming the file, the line and the
key of the layer that set it: never a traceback, never the built-in defaults for a value
a file set, never the server's fault."""

from __future__ import annotations

import math
from typing import Any, get_args

import pytest
from annotated_types import Ge, Gt, Le
from pydantic import BaseModel

from novel_agent.config.layers import Layer, load_config, load_yaml_layer, merge_layers
from novel_agent.config.settings import SECTIONS, Config, StageOverrides
from novel_agent.errors import ConfigError
from tests.support.clirunner import invoke


def numbers(model: type[BaseModel], prefix: str) -> list[tuple[str, type, dict[str, Any]]]:
    """(dotted key, int or float, its bounds) of every number `model` declares."""
    out = []
    for key, info in model.model_fields.items():
        kind = next((t for t in (info.annotation, *get_args(info.annotation))
                     if t in (int, float)), None)
        if kind is not None:
            bounds = {type(m): getattr(m, type(m).__name__.lower()) for m in info.metadata
                      if isinstance(m, Ge | Gt | Le)}
            out.append((f"{prefix}{key}", kind, bounds))
    return out


NUMBERS = [n for section, model in SECTIONS.items() for n in numbers(model, f"{section}.")]
STAGE_NUMBERS = numbers(StageOverrides, "llm.stages.writer.")


def refused(key: str, kind: type, bounds: dict[type, Any]) -> list[Any]:
    """The values `key` must refuse: NaN and both infinities for a float; below its lower
    bound and above its upper one."""
    values: list[Any] = [math.nan, math.inf, -math.inf] if kind is float else []
    if Ge in bounds:
        values.append(bounds[Ge] - 1)
    if Gt in bounds:
        values.append(bounds[Gt])
    if Le in bounds:
        values.append(bounds[Le] + 1)
    return [kind(v) if kind is int else v for v in values]


def yaml_of(value: Any) -> str:
    if math.isnan(value):
        return ".nan"
    return {math.inf: ".inf", -math.inf: "-.inf"}.get(value, repr(value))


def cases(found: list[tuple[str, type, dict[type, Any]]]) -> list[tuple[str, Any]]:
    return [(key, value) for key, kind, bounds in found for value in refused(key, kind, bounds)]


def test_every_number_has_its_bounds_declared():
    assert len(NUMBERS) > 40 and len(STAGE_NUMBERS) >= 6
    unbounded = [key for key, _, bounds in NUMBERS + STAGE_NUMBERS if not bounds]
    assert unbounded == ["llm.seed"]        # any seed is a seed


@pytest.mark.parametrize(("key", "value"), cases(NUMBERS + STAGE_NUMBERS),
                         ids=[f"{k}={v}" for k, v in cases(NUMBERS + STAGE_NUMBERS)])
def test_a_number_out_of_its_bounds_is_one_line_naming_file_line_and_key(tmp_path, key, value):
    *path, last = key.split(".")
    text = "# a project\n" + "".join(f"{'  ' * i}{part}:\n" for i, part in enumerate(path))
    text += f"{'  ' * len(path)}{last}: {yaml_of(value)}\n"
    (tmp_path / "project.yaml").write_text(text)
    with pytest.raises(ConfigError) as caught:
        load_config(load_yaml_layer(tmp_path / "project.yaml"))
    error = caught.value
    assert (error.file, error.line) == (str(tmp_path / "project.yaml"), text.count("\n"))
    assert error.key == key and f"{key}: must be " in str(error), str(error)
    assert "\n" not in str(error) and "built-in defaults" not in str(error)


def test_an_infinite_timeout_is_one_line_not_a_traceback(project, snapshot):
    project.project_file.write_text(project.project_file.read_text()
                                    + "  timeout: .inf\n")          # llm: is the last section
    line = len(project.project_file.read_text().splitlines())
    before = snapshot(project.root)
    result = invoke("tick", "-p", "harbour")
    assert result.exit_code == 1 and snapshot(project.root) == before
    assert result.output == (f"Error: {project.project_file}:{line}: llm.timeout: must be a "
                             "finite number, above 0, at most 86,400, not inf\n")


@pytest.mark.parametrize(("yaml", "said"), [
    ("generation:\n  scene_max_words: -1\n", "generation.scene_max_words: must be positive, not -1"),
    ("context:\n  max_prompt_tokens: -1\n", "context.max_prompt_tokens: must be positive, not -1"),
    ("llm:\n  temperature: .nan\n", "llm.temperature: must be a finite number, from 0 to 2, not nan"),
    ("generation:\n  scene_max_words: 150\n",
     "generation.scene_max_words: must be at least generation.scene_min_words (200)"),
    ("context:\n  keep_prompt_logs: 300\n",
     "context.keep_prompt_logs: must be at most context.prompt_log_ticks (200)"),
    ("context:\n  style_share: 0.6\n",
     "context.style_share: the tier shares add up to 1.11, more than the whole budget"),
    ("context:\n  planner_shares: {loops: .nan}\n",
     "context.planner_shares.loops: must be a share from 0 to 1, not nan"),
    ("context:\n  relevance: {bm25: -1}\n",
     "context.relevance.bm25: must be a finite number, 0 or more, not -1"),
    ("llm:\n  prices: {input: .inf, output: 1}\n",
     "llm.prices.input: must be a finite number, 0 or more, not inf"),
    ("context:\n  compaction_thresholds: [0.5, .inf, 0.9]\n",
     "context.compaction_thresholds: must be three rising shares between 0 and 1, not inf"),
    ("context:\n  embeddings: {batch_size: 0}\n",
     "context.embeddings.batch_size: must be from 1 to 2,048, not 0"),
])
def test_the_key_a_file_set_is_blamed_never_the_built_in_defaults(tmp_path, yaml, said):
    """`scene_max_words: -1` once blamed llm.writer_max_tokens in the built-in defaults,
    `max_prompt_tokens: -1` context.window; a rule across two keys names the one a file set;
    an item of a mapping or a list is named as the key it is."""
    (tmp_path / "project.yaml").write_text(yaml)
    with pytest.raises(ConfigError) as caught:
        load_config(load_yaml_layer(tmp_path / "project.yaml"))
    assert str(caught.value) == f"{tmp_path / 'project.yaml'}:2: {said}"
    assert (caught.value.key, caught.value.line) == (said.split(":")[0], 2)


def test_a_rule_across_keys_blames_the_layer_that_set_one_last():
    preset = Layer("p.yaml", {"generation": {"scene_min_words": 300}},
                   {("generation", "scene_min_words"): 7})
    flags = Layer("command line", {"generation": {"scene_max_words": 250}})
    with pytest.raises(ConfigError) as caught:
        merge_layers([preset, flags])
    assert (caught.value.file, caught.value.key) == ("command line", "generation.scene_max_words")
    with pytest.raises(ConfigError) as caught:
        merge_layers([flags, preset])
    assert (caught.value.file, caught.value.line, caught.value.key) == (
        "p.yaml", 7, "generation.scene_min_words")


def test_types_are_strict_an_int_is_a_float_and_yaml_off_is_off():
    with pytest.raises(ConfigError, match="generation.max_tools_per_tick must be int, not '3'"):
        load_config(flags={"generation.max_tools_per_tick": "3"})
    with pytest.raises(ConfigError, match="llm.timeout must be float, not True"):
        load_config(flags={"llm.timeout": True})
    config = load_config(flags={"llm.timeout": 30, "context.planner_shares": {"loops": 0}})
    assert isinstance(config.llm.timeout, float) and config.context.planner_shares["loops"] == 0.0
    off = load_config(flags={"audit.mode": False, "outline.revise": False, "style.rewrite": False})
    assert (off.audit.mode, off.outline.revise, off.style.rewrite) == ("off", "off", "off")
    env = load_config(env={"NOVEL_STYLE_REWRITE": "off", "NOVEL_LLM_MODEL": "4"})
    assert (env.style.rewrite, env.llm.model) == ("off", "4")


def test_the_configuration_is_frozen_and_changed_through_model_copy():
    config = load_config(flags={"llm.stages": {"writer": {"model": "big", "max_tokens": 900}}})
    with pytest.raises(ValueError, match="frozen"):
        config.llm.model = "other"      # type: ignore[misc]
    other = config.model_copy(update={"llm": config.llm.model_copy(update={"model": "m"})})
    assert (other.llm.model, config.llm.model) == ("m", "")
    assert config.to_dict()["llm"]["stages"] == {"writer": {"model": "big", "max_tokens": 900}}
    assert Config().to_dict()["llm"]["stages"] == {}


def test_a_stage_cap_comes_from_its_registry_line_its_own_max_tokens_first():
    config = load_config(flags={"llm.planner_max_tokens": 321, "audit.max_tokens": 123,
                                "generation.scene_max_words": 200,
                                "llm.stages": {"extractor": {"max_tokens": 99}}})
    assert [config.max_tokens(s) for s in ("planner", "outline", "auditor", "writer",
                                            "extractor", "summarizer")] == [321, 321, 123, 350,
                                                                            99, 400]
    assert load_config(flags={"llm.writer_max_tokens": 500}).max_tokens("writer") == 500


@pytest.mark.parametrize("key", ["llm.timeout", "llm.stages.writer.timeout"])
def test_a_timeout_no_socket_takes_is_one_line_not_an_overflow(tmp_path, key):
    # a socket takes no timeout past ~1e9 s (time_t): 1e10 was a 164-line OverflowError
    *path, last = key.split(".")
    text = "".join(f"{'  ' * i}{part}:\n" for i, part in enumerate(path))
    (tmp_path / "project.yaml").write_text(text + f"{'  ' * len(path)}{last}: 10000000000\n")
    with pytest.raises(ConfigError) as caught:
        load_config(load_yaml_layer(tmp_path / "project.yaml"))
    assert str(caught.value) == (f"{tmp_path / 'project.yaml'}:{len(path) + 1}: {key}: must be "
                                 "a finite number, above 0, at most 86,400, not 10000000000")


def test_a_timeout_past_a_day_stops_the_tick_in_one_line_before_the_server(openai_project):
    from tests.support.fake_openai import FakeOpenAIServer
    from tests.support.projects import set_llm

    with FakeOpenAIServer() as server:
        set_llm(openai_project, llm__base_url=server.base_url, llm__timeout=10_000_000_000)
        result = invoke("tick", "-p", "harbour")
        assert server.requests == []
    assert result.exit_code == 1 and result.output.count("\n") == 1, result.output
    assert "llm.timeout: must be a finite number, above 0, at most 86,400" in result.output
