"""Models: the ChatModel interface and `get_model`, the one place a client is built."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Mapping

from ..config import Config
from ..errors import ConfigError
from .base import ChatModel, Completion, Request, Usage

if TYPE_CHECKING:
    from .offline import StorySource

DEFAULT_OPENAI_MODEL = "gpt-4o-mini"

__all__ = ["ChatModel", "Completion", "Request", "Usage", "get_model", "resolve_provider", "describe_provider",
           "model_id"]


def resolve_provider(config: Config) -> str:
    """The provider a config means: `auto` is local when its model file is there, else offline."""
    provider = config.llm.provider
    if provider != "auto":
        return provider
    if config.llm.base_url:
        return "openai"
    from .local import default_gguf_path
    if config.llm.model_path or default_gguf_path() is not None:
        return "local"
    return "offline"


def model_id(config: Config) -> str:
    """The model name used for token counting and the window table."""
    provider = resolve_provider(config)
    if config.llm.model:
        return config.llm.model
    if provider == "openai":
        return DEFAULT_OPENAI_MODEL
    if provider == "local":
        return Path(config.llm.model_path).stem if config.llm.model_path else "SmolLM2-135M-Instruct"
    return "offline"


def get_model(config: Config, env: Mapping[str, str], source: "StorySource | None" = None
              ) -> ChatModel:
    """Build the model a configuration asks for. The API key is read from `env` here only;
    the offline model draws on `source` (see models/offline.py)."""
    provider = resolve_provider(config)
    llm = config.llm
    if provider == "offline":
        from .offline import OfflineModel
        return OfflineModel(seed=llm.seed, source=source)
    if provider == "local":
        from .local import LocalModel
        return LocalModel(Path(llm.model_path).expanduser() if llm.model_path else None,
                          n_ctx=llm.local_context, timeout=llm.timeout,
                          max_retries=llm.max_retries, temperature=llm.temperature,
                          seed=llm.seed)
    if provider == "openai":
        from .openai_compat import OpenAICompatModel
        key = env.get(llm.api_key_env) or None
        if key is None and not llm.base_url:
            raise ConfigError(f"llm.provider is openai but ${llm.api_key_env} is not set "
                              "(export it, or set llm.base_url for a server that needs no key)",
                              key="llm.api_key_env")
        return OpenAICompatModel(base_url=llm.base_url or "https://api.openai.com/v1",
                                 model=llm.model or DEFAULT_OPENAI_MODEL, api_key=key,
                                 timeout=llm.timeout, max_retries=llm.max_retries,
                                 temperature=llm.temperature)
    raise ConfigError(f"unknown llm.provider {provider!r}", key="llm.provider")


def describe_provider(config: Config) -> str:
    """A short description of the configured model, without starting it."""
    provider = resolve_provider(config)
    if provider == "openai":
        return f"openai {model_id(config)} at {config.llm.base_url or 'api.openai.com'}"
    if provider == "local":
        return f"local {model_id(config)} (llama.cpp)"
    return "offline (deterministic, no LLM)"
