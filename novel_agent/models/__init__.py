"""Models: the ChatModel interface and `get_model`, the one place a client is built
(by the provider the configuration means: see models/providers.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from novel_agent.config.settings import Config
from novel_agent.models.base import ChatModel, Completion, OnProgress, Progress, Request, Usage
from novel_agent.models.providers import (
    DEFAULT_OPENAI_MODEL,
    Provider,
    local_choice,
    local_tokenizer,
    missing_key,
    provider_for,
    resolve_provider,
)

__all__ = ["ChatModel", "Completion", "OnProgress", "Progress", "Provider", "Request", "Usage",
           "DEFAULT_OPENAI_MODEL", "get_model", "resolve_provider", "provider_for",
           "describe_provider", "local_choice", "local_tokenizer", "missing_key", "model_id"]


def model_id(config: Config) -> str:
    """The model name used for usage rows, prices and the window table."""
    return config.llm.model or provider_for(config).default_model(config)


def get_model(config: Config, env: Mapping[str, str], on_progress: OnProgress | None = None,
              client: Any = None) -> ChatModel:
    """Build the model a configuration asks for. The API key is read from `env` here only;
    a local model streams
    and tells `on_progress` how each call is going. `client` (a provider a fleet shares
    by client) replaces the SDK client: `novel fleet` passes one that shares a limit and
    a pause."""
    return provider_for(config).build(config, env, on_progress=on_progress, client=client)


def describe_provider(config: Config) -> str:
    """A short description of the configured model, without starting it."""
    return provider_for(config).describe(config)
