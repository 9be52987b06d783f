"""Models: the ChatModel interface and `get_model`, the one place a client is built."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from novel_agent.config.settings import Config, LLMConfig
from novel_agent.errors import ConfigError, ModelError
from novel_agent.models.base import ChatModel, Completion, OnProgress, Progress, Request, Usage

if TYPE_CHECKING:
    from novel_agent.models.llama_tokens import LlamaTokenizer
    from novel_agent.models.local_setup import LocalChoice
    from novel_agent.models.offline import StorySource

DEFAULT_OPENAI_MODEL = "gpt-4o-mini"
DEFAULT_ANTHROPIC_MODEL = "claude-sonnet-4-6"
ANTHROPIC_KEY_ENV = "ANTHROPIC_API_KEY"

__all__ = ["ChatModel", "Completion", "OnProgress", "Progress", "Request", "Usage", "get_model",
           "resolve_provider", "describe_provider", "local_choice", "local_tokenizer", "model_id"]


def resolve_provider(config: Config) -> str:
    """The provider a config means: `auto` is openai with a base_url, local when
    `llm.local_model` names a model that is installed (any named one: its absence is
    then an error worth seeing), else offline."""
    provider = config.llm.provider
    if provider != "auto":
        return provider
    if config.llm.base_url:
        return "openai"
    from novel_agent.models.local_setup import available
    if config.llm.local_model not in ("", "auto") or available("auto"):
        return "local"
    return "offline"


def local_choice(config: Config) -> LocalChoice:
    """What the local provider runs for this config (see models/local_setup.py)."""
    from novel_agent.models.local_setup import choose
    return choose(config.llm.local_model, config.llm.local_context)


def local_tokenizer(config: Config) -> LlamaTokenizer | None:
    """The configured local model's own tokenizer, for counting when the model is not
    running (it starts llama.cpp on first use); None when the model is not installed."""
    try:
        choice = local_choice(config)
    except ModelError:
        return None
    from novel_agent.models.local import counting_tokenizer
    return counting_tokenizer(choice.path, choice.name, choice.tokenizer)


def model_id(config: Config) -> str:
    """The model name used for usage rows, prices and the window table."""
    provider = resolve_provider(config)
    if config.llm.model:
        return config.llm.model
    if provider == "openai":
        return DEFAULT_OPENAI_MODEL
    if provider == "anthropic":
        return DEFAULT_ANTHROPIC_MODEL
    if provider == "local":
        try:
            return local_choice(config).name
        except ModelError:
            return config.llm.local_model or "auto"   # get_model says what is missing
    return "offline"


def anthropic_key_env(config: Config) -> str:
    """The variable the anthropic provider's key is read from: llm.api_key_env when set
    to other than the openai default, else ANTHROPIC_API_KEY."""
    given = config.llm.api_key_env
    return ANTHROPIC_KEY_ENV if given == LLMConfig.api_key_env else given


def missing_key(config: Config, env: Mapping[str, str]) -> str:
    """What the configured provider lacks before it can answer ("" when nothing): an
    openai or anthropic provider with no key in the environment and no base_url of its
    own."""
    if config.llm.provider == "anthropic" and not config.llm.base_url \
            and not env.get(anthropic_key_env(config)):
        name = anthropic_key_env(config)
        return (f"llm.provider is anthropic but ${name} is not set: export {name}=..., or "
                "set llm.api_key_env to the variable that holds your key")
    if config.llm.provider == "openai" and not env.get(config.llm.api_key_env) \
            and not config.llm.base_url:
        return (f"llm.provider is openai but ${config.llm.api_key_env} is not set: export "
                f"{config.llm.api_key_env}=..., or set llm.base_url in project.yaml for a server "
                "that needs no key")
    return ""


def get_model(config: Config, env: Mapping[str, str], source: StorySource | None = None,
              on_progress: OnProgress | None = None, client: Any = None) -> ChatModel:
    """Build the model a configuration asks for. The API key is read from `env` here only;
    the offline model draws on `source` (see models/offline.py); a local model streams
    and tells `on_progress` how each call is going. `client` (openai provider only)
    replaces the SDK client: `novel fleet` passes one that shares a limit and a backoff."""
    provider = resolve_provider(config)
    llm = config.llm
    if provider == "offline":
        from novel_agent.models.offline import OfflineModel
        return OfflineModel(seed=llm.seed, source=source)
    if provider == "local":
        from novel_agent.models.local import LocalModel
        choice = local_choice(config)
        return LocalModel(choice.path, n_ctx=choice.n_ctx, timeout=llm.timeout,
                          max_retries=llm.max_retries, temperature=llm.temperature,
                          seed=llm.seed, name=choice.name, threads=choice.threads,
                          fallback_threads=choice.fallback_threads,
                          tokenizer=choice.tokenizer, on_progress=on_progress)
    if provider == "openai":
        from novel_agent.models.openai_compat import OpenAICompatModel
        key = env.get(llm.api_key_env) or None
        if key is None and not llm.base_url:
            raise ConfigError(f"llm.provider is openai but ${llm.api_key_env} is not set "
                              "(export it, or set llm.base_url for a server that needs no key)",
                              key="llm.api_key_env")
        return OpenAICompatModel(base_url=llm.base_url or "https://api.openai.com/v1",
                                 model=llm.model or DEFAULT_OPENAI_MODEL, api_key=key,
                                 timeout=llm.timeout, max_retries=llm.max_retries,
                                 temperature=llm.temperature, client=client)
    if provider == "anthropic":
        try:
            from novel_agent.models.anthropic_model import AnthropicModel
        except ImportError:
            raise ConfigError("llm.provider is anthropic but the anthropic SDK is not installed: "
                              "pip install 'novel_agent[anthropic]'", key="llm.provider") from None
        name = anthropic_key_env(config)
        if not env.get(name) and not llm.base_url:
            raise ConfigError(f"llm.provider is anthropic but ${name} is not set (export it, or "
                              "set llm.api_key_env to the variable that holds your key)",
                              key="llm.api_key_env")
        return AnthropicModel(model_id(config), env.get(name) or None, key_env=name,
                              base_url=llm.base_url or "https://api.anthropic.com", timeout=llm.timeout,
                              max_retries=llm.max_retries, on_progress=on_progress)
    raise ConfigError(f"unknown llm.provider {provider!r}", key="llm.provider")


def describe_provider(config: Config) -> str:
    """A short description of the configured model, without starting it."""
    provider = resolve_provider(config)
    if provider == "openai":
        return f"openai {model_id(config)} at {config.llm.base_url or 'api.openai.com'}"
    if provider == "anthropic":
        return f"anthropic {model_id(config)} at {config.llm.base_url or 'api.anthropic.com'}"
    if provider == "local":
        try:
            return f"local {local_choice(config).describe()} (llama.cpp)"
        except ModelError as exc:
            return f"local, not ready: {exc}"
    return "offline (deterministic, no LLM)"
