"""The window a llama.cpp server (llama-server) runs with, asked of the server itself.

llama-server serves one model under whatever name a request gives, so a name says nothing
of its window; the server does: GET /props (beside its OpenAI endpoints, without the /v1)
answers `default_generation_settings.n_ctx`, the tokens each of its slots holds (its `-c`
divided by `--parallel`). The openai provider asks when no window is set and the model's
name is not in configs/models.yaml (models/providers.py). Ollama, LM Studio and OpenAI
answer no such thing, and the window stays the table's default.
"""

from __future__ import annotations

import http.client
import json
import urllib.request

PROPS_TIMEOUT = 2.0     # seconds: a server on this machine answers at once
PROPS_LIMIT = 1 << 20   # bytes read of the answer (llama.cpp's is a few kB)


def props_url(base_url: str) -> str:
    """llama.cpp's /props beside an OpenAI-compatible base URL: http://host:8080/v1 gives
    http://host:8080/props."""
    return base_url.rstrip("/").removesuffix("/v1") + "/props"


def served_window(base_url: str, timeout: float = PROPS_TIMEOUT) -> int:
    """The tokens each slot of the llama.cpp server at `base_url` holds, from its /props;
    0 when the server says nothing of the kind (another server, none running, an answer
    that is not llama.cpp's)."""
    try:
        with urllib.request.urlopen(props_url(base_url), timeout=timeout) as answer:
            props = json.loads(answer.read(PROPS_LIMIT))
    except (OSError, ValueError, http.client.HTTPException):   # URLError is an OSError
        return 0
    settings = props.get("default_generation_settings") if isinstance(props, dict) else None
    n_ctx = settings.get("n_ctx") if isinstance(settings, dict) else None
    return n_ctx if type(n_ctx) is int and n_ctx > 0 else 0
