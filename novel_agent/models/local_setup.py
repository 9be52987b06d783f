"""Which GGUF the local provider runs, with what context and how many threads.

`llm.local_model` names an embedded model (`smollm2-135m`, `qwen2.5-coder-1.5b`, see
registry.py), `auto` (the best one installed), or a path to any `.gguf`. `choose`
turns that into a LocalChoice: the file, a display name, llama.cpp's context size
and thread count, and the tokenizer's identity (which keys cached token counts).

- Context: `llm.local_context` if set, else the registry's n_ctx for an embedded
  model (chosen for reading time: the 1.5B reads ~35-55 tok/s on 2 cores), else the
  GGUF's trained context up to PATH_CONTEXT_CAP; never over the trained context, and
  never more KV cache than half the machine's memory holds beside the weights.
- Threads: every core when the machine is quiet as the model starts (other processes
  keep under QUIET_LOAD cores busy: `machine_load`), else one fewer (at least 1); `fallback_threads` is the
  latter. Measured on 2 cores (bench/local_threads.py, Qwen 1.5B): quiet, 2 threads
  write 23.5 tok/s and read 57 against 1 thread's 16.5 and 36; beside one busy
  process llama.cpp's 2 threads wait on each other and collapse (8.1 tok/s; 0.8 at
  load 2.7) while 1 thread keeps its pace (17.8). So a LocalModel on every core that
  slows down that way goes on with `fallback_threads` (models/local.py).

The pure rules (`context_size`, `thread_count`) take their inputs; `choose` reads the
file's header, the cache folder, the memory and the cores, or takes them as arguments.
"""

from __future__ import annotations

import functools
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from novel_agent.config.stages import slots
from novel_agent.errors import ModelError
from novel_agent.models import registry
from novel_agent.models.gguf import GGUFInfo, read_info
from novel_agent.models.registry import Locate, ModelEntry

PATH_CONTEXT_CAP = 32768     # a GGUF named by path: its trained context, up to this
MIN_CONTEXT = 512
MEMORY_SHARE = 0.5           # of the machine's memory, for weights and KV cache together
COMPUTE_RESERVE = 256 << 20  # llama.cpp's compute buffers and the rest of the process


@dataclass(frozen=True)
class LocalChoice:
    """What the local provider will run."""

    path: Path
    name: str                    # shown in `novel tick`'s first line and usage rows
    entry: ModelEntry | None     # the embedded model, None for a GGUF named by path
    n_ctx: int
    threads: int
    tokenizer: str               # "llama.cpp <name> <digest>": the counts' cache key
    fallback_threads: int = 0    # what it goes on with if `threads` slow down (0: the same)

    def describe(self) -> str:
        """E.g. "Qwen2.5-Coder-1.5B-Instruct (8,192-token context, 1 thread)"."""
        threads = f"{self.threads} thread" + ("s" if self.threads != 1 else "")
        return f"{self.name} ({self.n_ctx:,}-token context, {threads})"


def models_dir() -> Path:
    """The folder assembled models live in ($NOVEL_MODELS_DIR, ...): read at the edge."""
    return registry.default_cache_dir(os.environ)


def machine_memory() -> int:
    """Physical memory in bytes (0 when the system does not say)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 0


def machine_cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


QUIET_LOAD = 0.5     # other processes keep less than half a core busy: a quiet machine
SAMPLE_SECONDS = 0.25  # how long machine_load watches the cores


def thread_count(cores: int, load: float | None = None) -> int:
    """llama.cpp's threads on `cores` cores: all of them on a quiet machine (`load`, the
    cores other processes keep busy, under QUIET_LOAD), else one fewer, so that another
    process never stalls it.

    >>> thread_count(2, 0.1), thread_count(2, 1.4), thread_count(2), thread_count(1, 0.0)
    (2, 1, 1, 1)
    """
    if load is not None and load < QUIET_LOAD:
        return cores
    return max(1, cores - 1)


def machine_load(stat: Path = Path("/proc/stat"), *,
                 sleep: Callable[[float], None] = time.sleep) -> float | None:
    """How many cores other processes keep busy now: the busy share of every core's time
    over SAMPLE_SECONDS (this process sleeps meanwhile) times the cores, from `stat`;
    where there is none, the 1-minute load average; None where the system says neither.
    Not the load average alone: it still counts a process that ended a minute ago (the
    demo's own `pip install` made a quiet machine look busy as the model started)."""
    try:
        before = _cpu_times(stat)
        sleep(SAMPLE_SECONDS)
        after = _cpu_times(stat)
    except (OSError, ValueError, IndexError):
        try:
            return os.getloadavg()[0]
        except (OSError, AttributeError):
            return None
    (busy0, total0, cores), (busy1, total1, _) = before, after
    return (busy1 - busy0) / (total1 - total0) * cores if total1 > total0 else 0.0


LOAD_FRESH = 5.0     # seconds a sampled load stands for the next choose() (status, limits...)
_sampled: list[tuple[float, float | None]] = []


def current_load(clock: Callable[[], float] = time.monotonic) -> float | None:
    """machine_load, sampled again only after LOAD_FRESH seconds: one command asks for the
    local choice several times (its window, its name, the model), and pays once."""
    now = clock()
    if not _sampled or now - _sampled[0][0] > LOAD_FRESH:
        _sampled[:] = [(now, machine_load())]
    return _sampled[0][1]


def _cpu_times(stat: Path) -> tuple[int, int, int]:
    """(busy, total) jiffies of all cores from /proc/stat's "cpu" line, and the cores."""
    lines = stat.read_text().splitlines()
    fields = [int(x) for x in lines[0].split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)      # idle + iowait
    cores = sum(1 for line in lines if re.match(r"cpu\d+ ", line)) or 1
    return sum(fields[:8]) - idle, sum(fields[:8]), cores


def context_size(wanted: int, trained: int, kv_per_token: int, weights: int,
                 memory: int) -> int:
    """`wanted` tokens of context, at most `trained`, and at most what half of `memory`
    holds as KV cache beside `weights` bytes of model; a multiple of 256, at least 512.

    >>> context_size(8192, 32768, 28672, 1_117_320_768, 24 << 30)
    8192
    >>> context_size(8192, 32768, 28672, 1_117_320_768, 2 << 30)
    512
    """
    n = min(wanted, trained) if trained else wanted
    if kv_per_token and memory:
        room = memory * MEMORY_SHARE - weights - COMPUTE_RESERVE
        n = min(n, int(room // kv_per_token))
    return max(MIN_CONTEXT, n // 256 * 256)


def gguf_info(path: Path) -> GGUFInfo:
    """`path`'s header facts, read once per file version in this process."""
    stat = Path(path).stat()
    return _info(str(path), stat.st_size, stat.st_mtime_ns)


@functools.lru_cache(maxsize=8)
def _info(path: str, size: int, mtime_ns: int) -> GGUFInfo:   # keyed by the file's version
    return read_info(Path(path))


def configured(name: str, *, cache_dir: Path | None = None,
               locate: Locate | None = None) -> tuple[Path, ModelEntry | None]:
    """The GGUF `llm.local_model` names, and its registry entry (None for a path)."""
    cache_dir = models_dir() if cache_dir is None else cache_dir
    locate = locate or registry.find_package_file
    key = name.strip() or "auto"
    if key == "auto":
        best = registry.best_installed(cache_dir=cache_dir, locate=locate)
        key = best.name if best else key
    path = registry.resolve(key, cache_dir=cache_dir, locate=locate)
    return path, registry.MODELS.get(key)


def available(name: str, *, cache_dir: Path | None = None,
              locate: Locate | None = None) -> bool:
    """Whether `llm.local_model` names a model that is there (for provider `auto`)."""
    try:
        configured(name, cache_dir=cache_dir, locate=locate)
    except ModelError:
        return False
    return True


def display_name(path: Path, entry: ModelEntry | None) -> str:
    """The embedded model's name without its quantization, else the file's."""
    if entry is not None:
        return entry.display.split(" ")[0]
    from novel_agent.models.local import gguf_display_name
    return gguf_display_name(path)


def choose(local_model: str, local_context: int = 0, *, cache_dir: Path | None = None,
           locate: Locate | None = None, memory: int | None = None,
           cores: int | None = None, load: float | None = None) -> LocalChoice:
    """The LocalChoice for `llm.local_model` and `llm.local_context` (0 = the model's);
    `memory`, `cores` and `load` (machine_load: the cores busy now) are read from the machine
    when not given."""
    path, entry = configured(local_model, cache_dir=cache_dir, locate=locate)
    info = gguf_info(path)
    name = display_name(path, entry)
    wanted = local_context or (entry.n_ctx if entry else min(
        info.context_length or PATH_CONTEXT_CAP, PATH_CONTEXT_CAP))
    n_ctx = context_size(wanted, info.context_length,
                         info.kv_bytes_per_token * slots(),   # each stage's slot has n_ctx
                         path.stat().st_size, machine_memory() if memory is None else memory)
    cores = machine_cores() if cores is None else cores
    threads = thread_count(cores, current_load() if load is None else load)
    return LocalChoice(path=path, name=name, entry=entry, n_ctx=n_ctx, threads=threads,
                       tokenizer=f"llama.cpp {name} {info.tokenizer_digest[:16]}",
                       fallback_threads=thread_count(cores))
