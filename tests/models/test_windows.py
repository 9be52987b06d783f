"""The model table: lookups, defaults for unknown models, overrides, broken files."""

from __future__ import annotations

import pytest

from novel_agent.errors import ConfigError
from novel_agent.models.limits import load_model_table, match_model, model_limits
from novel_agent.paths import config_dir

TABLE = """\
models:
  gpt-4o: {window: 128000, max_output: 16384}
  gpt-4o-mini: {window: 128000, max_output: 16384}
  gpt-4: {window: 8192, max_output: 8192}
  llama3: {window: 8192, max_output: 4096}
  llama3.1: {window: 131072, max_output: 4096}
  gemma3: {window: 131072, max_output: 8192}
  gemma3:1b: {window: 32768, max_output: 4096}
"""


@pytest.fixture
def table(tmp_path):
    path = tmp_path / "models.yaml"
    path.write_text(TABLE)
    return path


@pytest.mark.parametrize("model, matched, window", [
    ("gpt-4o", "gpt-4o", 128000),                       # exact
    ("GPT-4o-mini", "gpt-4o-mini", 128000),             # exact, any case
    ("gpt-4o-2024-08-06", "gpt-4o", 128000),            # prefix
    ("gpt-4-0613", "gpt-4", 8192),                      # the longest prefix that fits
    ("gpt-4o-mini-2024-07-18", "gpt-4o-mini", 128000),  # longest of several prefixes
    ("openai/gpt-4o", "gpt-4o", 128000),                # provider prefix
    ("llama3.1:8b", "llama3.1", 131072),                # ollama tag
    ("llama3:70b-instruct-q4_0", "llama3", 8192),
    ("gemma3:1b", "gemma3:1b", 32768),                  # an exact tagged entry beats the base
    ("gemma3:12b", "gemma3", 131072),
    ("ollama/gemma3:1b", "gemma3:1b", 32768),
])
def test_lookup(table, model, matched, window):
    limits = model_limits(model, table_path=table)
    assert (limits.matched, limits.window, limits.known, limits.warning) == (matched, window, True, "")
    assert limits.model == model


def test_unknown_model_gets_the_default_and_a_warning(table):
    limits = model_limits("foo", table_path=table)
    assert (limits.window, limits.max_output, limits.known) == (8192, 4096, False)
    assert limits.warning == ("unknown model 'foo': assuming an 8,192-token window "
                              "(set context.window in project.yaml)")
    assert "\n" not in limits.warning


def test_override_wins(table):
    assert model_limits("gpt-4o", window_override=32000, table_path=table).window == 32000
    unknown = model_limits("foo", window_override=65536, table_path=table)
    assert (unknown.window, unknown.known, unknown.warning) == (65536, False, "")
    small = model_limits("gpt-4o", window_override=4096, table_path=table)
    assert small.max_output == 4096  # no answer is longer than the window


def test_match_model_returns_none_for_no_prefix(table):
    assert match_model("mistral", load_model_table(table)) is None
    assert match_model("gpt", load_model_table(table)) is None


def test_an_edited_table_is_read_again(table):
    assert model_limits("gpt-4o", table_path=table).window == 128000
    table.write_text(TABLE.replace("gpt-4o: {window: 128000", "gpt-4o: {window: 64000"))
    assert model_limits("gpt-4o", table_path=table).window == 64000


# ---------------------------------------------------------------- the shipped table


def test_the_shipped_table_loads_and_is_the_default():
    table = load_model_table(config_dir() / "models.yaml")
    assert len(table) >= 40
    assert all(0 < out <= window for window, out in table.values())
    assert model_limits("gpt-4o") == model_limits("gpt-4o", table_path=config_dir() / "models.yaml")


@pytest.mark.parametrize("model, window, max_output", [
    ("gpt-4o", 128000, 16384),
    ("gpt-4o-mini", 128000, 16384),
    ("openai/gpt-4.1-mini", 1047576, 32768),
    ("gpt-5", 400000, 128000),
    ("gpt-5-chat-latest", 128000, 16384),
    ("o1-mini", 128000, 65536),
    ("o3-mini", 200000, 100000),
    ("o4-mini-2025-04-16", 200000, 100000),
    ("gpt-3.5-turbo", 16385, 4096),
    ("gpt-4-turbo-2024-04-09", 128000, 4096),
    ("anthropic/claude-3-5-sonnet-20241022", 200000, 8192),
    ("claude-3-7-sonnet-latest", 200000, 64000),
    ("claude-sonnet-4-20250514", 200000, 64000),
    ("claude-opus-4-20250514", 200000, 32000),
    ("claude-3-5-haiku-latest", 200000, 8192),
    ("llama3:8b", 8192, 4096),
    ("llama3.2:3b", 131072, 4096),
    ("llama3.3:70b", 131072, 4096),
    ("qwen2.5:7b", 32768, 8192),
    ("qwen3:8b", 40960, 8192),
    ("mistral:7b", 32768, 4096),
    ("mistral-nemo:12b", 131072, 4096),
    ("mixtral:8x7b", 32768, 4096),
    ("gemma2:9b", 8192, 4096),
    ("gemma3:4b", 131072, 8192),
    ("SmolLM2-135M-Instruct", 8192, 2048),
    ("HuggingFaceTB/SmolLM2-135M-Instruct", 8192, 2048),
])
def test_shipped_windows(model, window, max_output):
    limits = model_limits(model)
    assert (limits.window, limits.max_output, limits.known) == (window, max_output, True)


# ---------------------------------------------------------------- broken tables


@pytest.mark.parametrize("text, line, message", [
    ("models:\n  gpt-4o: {window: 128000, max_output: 16384\n  o1: {}\n", 2, "invalid YAML"),
    ("models:\n  gpt-4o: {window: 128000, max_output: 16384}\n  o1: {window: big, max_output: 1}\n",
     3, "'o1.window' must be a positive integer"),
    ("models:\n  gpt-4o:\n    window: 128000\n    max_output: 16384\n    colour: blue\n",
     5, "unknown key 'colour'"),
    ("models:\n  gpt-4o: {window: 128000}\n", 2, "'gpt-4o.max_output' must be a positive integer"),
    ("models:\n  gpt-4o: 128000\n", 2, "'gpt-4o' must be a mapping"),
    ("gpt-4o: {window: 128000, max_output: 16384}\n", 1, "top-level key 'models' (and optionally 'prices')"),
])
def test_a_broken_table_names_file_and_line(tmp_path, text, line, message):
    path = tmp_path / "models.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as caught:
        model_limits("gpt-4o", table_path=path)
    assert caught.value.file == str(path) and caught.value.line == line
    assert str(caught.value).startswith(f"{path}:{line}: ") and message in str(caught.value)


def test_a_missing_table_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="file not found"):
        model_limits("gpt-4o", table_path=tmp_path / "nope.yaml")
