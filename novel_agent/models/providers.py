"""The providers: what each kind of model can do, and how it is built, named and described.

A provider is a record (`Provider`): its capabilities (how it holds an answer to a JSON
schema, whether it streams, counts its own tokens, caches a prompt's prefix, runs on
this machine, costs money, needs a key) and the functions that build its ChatModel,
name its default model, describe it and say what it still lacks. The built-in ones
(openai, anthropic, llm, local, offline) are registered here; an installed package registers more
through the entry point group `novel_agent.providers` (config/providers.py), whose
entry point resolves to a Provider or to a callable returning one.

The rest of the code asks a provider what it can do (`provider_for(config).local`),
never its name: this module is the one place a provider is told apart by name.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from novel_agent.config.providers import BUILT_IN, installed, provider_names
from novel_agent.config.settings import Config, LLMConfig
from novel_agent.errors import ConfigError, ModelError
from novel_agent.models.base import NO_KEY, ChatModel, OnProgress
from novel_agent.models.retry import SDK_RETRIES

if TYPE_CHECKING:
    from novel_agent.models.llama_tokens import LlamaTokenizer
    from novel_agent.models.local_setup import LocalChoice
    from novel_agent.text.tokens import Tokenizer

DEFAULT_OPENAI_MODEL = "gpt-4o-mini"
OPENAI_URL = "https://api.openai.com/v1"
DEFAULT_ANTHROPIC_MODEL = "claude-sonnet-4-6"
ANTHROPIC_URL = "https://api.anthropic.com"
ANTHROPIC_KEY_ENV = "ANTHROPIC_API_KEY"
STRUCTURED = ("json_schema", "grammar", "prompt")


class Build(Protocol):
    """How a provider makes its model: the API key is read from `env` here only; a
    streaming model tells `on_progress` how each call goes; `client` replaces an SDK
    client (`novel fleet` passes one that shares a limit and a pause)."""

    def __call__(self, config: Config, env: Mapping[str, str], *,
                 on_progress: OnProgress | None = None, client: Any = None) -> ChatModel: ...


def _nothing_missing(config: Config, env: Mapping[str, str]) -> str:
    return ""


@dataclass(frozen=True)
class Provider:
    """One kind of model: what it can do, and how to build, name and describe it.

    `structured`: how it holds an answer to a JSON schema: "json_schema" (it takes the
    schema), "grammar" (its server compiles the schema to a grammar), "prompt" (it is
    asked in words only). `local`: a language model running on this machine, small and
    slow (the planner and extractor hold it to their lean schemas, the writer shows it
    the newest scene's ending). `paid`: its calls cost money (priced by llm.prices or
    configs/models.yaml); not paid, they cost 0. `window`: the window it runs with, when
    the provider sets or finds one (0: the table's). `tokenizer`: its own, for counting prompts as it does.
    `shares`: how a fleet shares it between books: "server" (one embedded server for
    all, fleet/local.py), "client" (one SDK client per `server(config)`, made by
    `async_client(base_url, api_key, timeout)`, whose `calls` path ends in the `create`
    a request goes through, within the fleet's one limit and pause), or "" (each book
    builds its own). `key_env`: the variable its API key is read from.
    """

    name: str
    build: Build
    default_model: Callable[[Config], str]
    describe: Callable[[Config], str]
    structured: str = "prompt"
    streams: bool = False
    own_counts: bool = False        # the usage it reports is the server's own token count
    prefix_cache: bool = False      # it reuses an unchanged prompt prefix from call to call
    local: bool = False
    paid: bool = True
    needs_key: bool = False         # it reads an API key from the environment (llm.api_key_env)
    missing: Callable[[Config, Mapping[str, str]], str] = _nothing_missing
    window: Callable[[Config], int] | None = None
    window_unknown_only: bool = False   # `window` is asked only for a model the table lacks
    tokenizer: Callable[[Config], Tokenizer | None] | None = None
    shares: str = ""
    server: Callable[[Config], str] | None = None
    async_client: Callable[[str, str | None, float], Any] | None = None
    calls: str = "chat.completions"
    key_env: Callable[[Config], str] = lambda config: config.llm.api_key_env


# -- the built-in providers ---------------------------------------------------------------

def _build_offline(config: Config, env: Mapping[str, str], *,
                   on_progress: OnProgress | None = None, client: Any = None) -> ChatModel:
    from novel_agent.models.offline import OfflineModel
    return OfflineModel(seed=config.llm.seed)


OFFLINE = Provider(
    "offline", _build_offline, default_model=lambda config: "offline",
    describe=lambda config: "offline (deterministic, no LLM)",
    structured="json_schema", paid=False)


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


def _build_local(config: Config, env: Mapping[str, str], *,
                 on_progress: OnProgress | None = None, client: Any = None) -> ChatModel:
    from novel_agent.models.local import LocalModel
    choice, llm = local_choice(config), config.llm
    return LocalModel(choice.path, n_ctx=choice.n_ctx, timeout=llm.timeout,
                      max_retries=llm.max_retries, temperature=llm.temperature,
                      seed=llm.seed, name=choice.name, threads=choice.threads,
                      fallback_threads=choice.fallback_threads,
                      tokenizer=choice.tokenizer, on_progress=on_progress)


def _local_model(config: Config) -> str:
    try:
        return local_choice(config).name
    except ModelError:
        return config.llm.local_model or "auto"   # building the model says what is missing


def _describe_local(config: Config) -> str:
    try:
        return f"local {local_choice(config).describe()} (llama.cpp)"
    except ModelError as exc:
        return f"local, not ready: {exc}"


def _local_window(config: Config) -> int:
    try:
        return local_choice(config).n_ctx
    except ModelError:       # not installed: building the model says so
        return config.llm.local_context


LOCAL = Provider(
    "local", _build_local, default_model=_local_model, describe=_describe_local,
    structured="grammar", streams=True, own_counts=True, prefix_cache=True, local=True,
    paid=False, window=_local_window, tokenizer=local_tokenizer, shares="server")


def _build_openai(config: Config, env: Mapping[str, str], *,
                  on_progress: OnProgress | None = None, client: Any = None) -> ChatModel:
    from novel_agent.models.openai_compat import OpenAICompatModel
    llm = config.llm
    key = env.get(llm.api_key_env) or None
    if key is None and not llm.base_url:
        raise ConfigError(f"llm.provider is openai but ${llm.api_key_env} is not set "
                          "(export it, or set llm.base_url for a server that needs no key)",
                          key="llm.api_key_env")
    return OpenAICompatModel(base_url=_openai_server(config),
                             model=llm.model or DEFAULT_OPENAI_MODEL, api_key=key,
                             timeout=llm.timeout, max_retries=llm.max_retries,
                             temperature=llm.temperature, client=client)


def _openai_server(config: Config) -> str:
    return config.llm.base_url or OPENAI_URL


def _openai_async(base_url: str, api_key: str | None, timeout: float) -> Any:
    import openai  # imported where it is used: the SDK takes 0.7 s, every command paid it
    return openai.AsyncOpenAI(base_url=base_url, api_key=api_key or NO_KEY, timeout=timeout,
                              max_retries=SDK_RETRIES)


def _openai_window(config: Config) -> int:
    """The window a server at llm.base_url says it runs with (llama.cpp's /props): asked
    only for a model the table does not know (`window_unknown_only`): llama-server serves
    its one model under any name. 0 for OpenAI's API, or a server that says none."""
    if not config.llm.base_url:
        return 0
    from novel_agent.models.served_window import served_window
    return served_window(config.llm.base_url)


def _openai_missing(config: Config, env: Mapping[str, str]) -> str:
    llm = config.llm
    if env.get(llm.api_key_env) or llm.base_url:
        return ""
    return (f"llm.provider is openai but ${llm.api_key_env} is not set: export "
            f"{llm.api_key_env}=..., or set llm.base_url in project.yaml for a server "
            "that needs no key")


OPENAI = Provider(
    "openai", _build_openai, default_model=lambda config: DEFAULT_OPENAI_MODEL,
    describe=lambda config: (f"openai {config.llm.model or DEFAULT_OPENAI_MODEL} at "
                             f"{config.llm.base_url or 'api.openai.com'}"),
    structured="json_schema", own_counts=True, prefix_cache=True, needs_key=True,
    missing=_openai_missing, window=_openai_window, window_unknown_only=True,
    shares="client", server=_openai_server,
    async_client=_openai_async)

def anthropic_key_env(config: Config) -> str:
    """The variable the anthropic provider's key is read from: llm.api_key_env when set
    to other than the openai default, else ANTHROPIC_API_KEY."""
    given = config.llm.api_key_env
    return ANTHROPIC_KEY_ENV if given == LLMConfig.model_fields["api_key_env"].default else given


def _anthropic_model(config: Config) -> str:
    return config.llm.model or DEFAULT_ANTHROPIC_MODEL


def _anthropic_missing(config: Config, env: Mapping[str, str]) -> str:
    name = anthropic_key_env(config)
    if env.get(name) or config.llm.base_url:
        return ""
    return (f"llm.provider is anthropic but ${name} is not set: export {name}=..., or "
            "set llm.api_key_env to the variable that holds your key")


def _build_anthropic(config: Config, env: Mapping[str, str], *,
                     on_progress: OnProgress | None = None, client: Any = None) -> ChatModel:
    try:
        from novel_agent.models.anthropic_model import AnthropicModel
    except ImportError:
        raise ConfigError("llm.provider is anthropic but the anthropic SDK is not installed: "
                          "pip install 'novel_agent[anthropic]'", key="llm.provider") from None
    llm, name = config.llm, anthropic_key_env(config)
    if not env.get(name) and not llm.base_url:
        raise ConfigError(f"llm.provider is anthropic but ${name} is not set (export it, or "
                          "set llm.api_key_env to the variable that holds your key)",
                          key="llm.api_key_env")
    # a fleet's shared client does not stream: its requests wait at the fleet's gate
    return AnthropicModel(_anthropic_model(config), env.get(name) or None, key_env=name,
                          base_url=_anthropic_server(config), timeout=llm.timeout,
                          max_retries=llm.max_retries, on_progress=on_progress,
                          client=client, stream=client is None)


def _anthropic_server(config: Config) -> str:
    return config.llm.base_url or ANTHROPIC_URL


def _anthropic_async(base_url: str, api_key: str | None, timeout: float) -> Any:
    import anthropic
    return anthropic.AsyncAnthropic(base_url=base_url, api_key=api_key or NO_KEY,
                                    timeout=timeout, max_retries=SDK_RETRIES)


# Anthropic's Messages API: JSON through a forced tool (the schema is the tool's input),
# streamed, its own counts, an explicit prompt cache (cache_control breakpoints).
ANTHROPIC = Provider(
    "anthropic", _build_anthropic, default_model=_anthropic_model,
    describe=lambda config: (f"anthropic {_anthropic_model(config)} at "
                             f"{config.llm.base_url or 'api.anthropic.com'}"),
    structured="json_schema", streams=True, own_counts=True, prefix_cache=True,
    needs_key=True, missing=_anthropic_missing, shares="client", server=_anthropic_server,
    async_client=_anthropic_async, calls="messages", key_env=anthropic_key_env)


def _llm_library() -> Any:
    """models/llm_library.py (importing the `llm` library); a ConfigError saying how to
    install it when it is not installed."""
    try:
        return importlib.import_module("novel_agent.models.llm_library")
    except ImportError:
        raise ConfigError("llm.provider is llm but the llm library is not installed: "
                          "pip install 'novel_agent[llm]'", key="llm.provider") from None


def _llm_model(config: Config) -> str:
    """llm.model, or llm's default model (`llm models default`) when it is empty."""
    if config.llm.model:
        return config.llm.model
    try:
        import llm
    except ImportError:      # building the model says how to install it
        return "llm-default"
    return str(llm.get_default_model())


def _describe_llm(config: Config) -> str:
    try:
        _llm_library()
    except ConfigError as exc:
        return f"llm, not ready: {exc}"
    return f"llm {_llm_model(config)} (through the llm library)"


def _llm_missing(config: Config, env: Mapping[str, str]) -> str:
    try:
        library = _llm_library()
        return str(library.key_missing(library.find(config.llm.model), env))
    except ConfigError as exc:
        return str(exc)


def _build_llm(config: Config, env: Mapping[str, str], *,
               on_progress: OnProgress | None = None, client: Any = None) -> ChatModel:
    library = _llm_library()
    from novel_agent.models.llm_model import LlmModel
    from novel_agent.text.tokens import TokenCounter
    llm = config.llm
    model = library.find(llm.model)
    missing = library.key_missing(model, env)
    if missing:
        raise ConfigError(missing, key="llm.model")
    return LlmModel(model, library.key_for(model, env), timeout=llm.timeout,
                    max_retries=llm.max_retries, temperature=llm.temperature,
                    on_progress=on_progress, skipped=library.load_plugins(),
                    counter=TokenCounter(model.model_id, config.context.encoding))


# Any model of Simon Willison's llm library, by its id or alias (llm_model.py): JSON through
# llm's schema support where the model has it (`supports_schema`; else asked in words),
# streamed where it can, its own counts from the plugin's usage. Paid: a price comes from
# llm.prices or configs/models.yaml by the model's name (a model that runs at home: set
# llm.prices to 0). Its key is the one llm finds (`llm keys set`, or the model's variable).
LLM = Provider(
    "llm", _build_llm, default_model=_llm_model,
    describe=_describe_llm,
    structured="json_schema", streams=True, own_counts=True, needs_key=True,
    missing=_llm_missing)

_REGISTERED: dict[str, Provider] = {p.name: p for p in (OPENAI, ANTHROPIC, LLM, LOCAL, OFFLINE)}
assert tuple(_REGISTERED) == BUILT_IN, "config/providers.py lists the built-in names"


# -- finding one ---------------------------------------------------------------------------

def register(provider: Provider) -> None:
    """Make `provider` known by its name from now on (a built-in one is not replaced)."""
    if provider.name in BUILT_IN or provider.name == "auto":
        raise ConfigError(f"a provider may not be registered as {provider.name!r}: the name "
                          "is built in", key="llm.provider")
    _REGISTERED[provider.name] = provider


def lookup(name: str) -> Provider:
    """The provider registered as `name` (an installed package's entry point is loaded on
    first use); a ConfigError naming llm.provider and the known names when none is."""
    found = known(name)
    if found is None:
        raise ConfigError(f"llm.provider: must be one of {', '.join(provider_names())}, "
                          f"not {name!r}", key="llm.provider")
    return found


def known(name: str) -> Provider | None:
    """The provider registered as `name`, None when nothing registers it."""
    if name in _REGISTERED:
        return _REGISTERED[name]
    entry = installed().get(name)
    if entry is None or name == "auto":
        return None
    try:      # a third party's code: whatever it raises says its entry point is broken
        loaded = entry.load()
        provider = loaded() if callable(loaded) and not isinstance(loaded, Provider) else loaded
    except Exception as exc:  # noqa: BLE001
        raise ConfigError(f"llm.provider {name!r}: its entry point ({entry.value}) could not "
                          f"be loaded: {type(exc).__name__}: {exc}", key="llm.provider") from exc
    if not isinstance(provider, Provider):
        raise ConfigError(f"llm.provider {name!r}: its entry point ({entry.value}) gives no "
                          "Provider", key="llm.provider")
    if provider.name != name:
        provider = dataclasses.replace(provider, name=name)
    _REGISTERED[name] = provider
    return provider


def forget(name: str) -> None:
    """Forget a provider registered (or loaded from an entry point) as `name`; a built-in
    one stays. For tests that register their own."""
    if name not in BUILT_IN:
        _REGISTERED.pop(name, None)


def resolve_provider(config: Config) -> str:
    """The provider a config means: `auto` is openai with a base_url, local when
    `llm.local_model` names a model that is installed (any named one: its absence is
    then an error worth seeing), else offline."""
    provider = config.llm.provider
    if provider != "auto":
        return provider
    if config.llm.base_url:
        return OPENAI.name
    from novel_agent.models.local_setup import available
    if config.llm.local_model not in ("", "auto") or available("auto"):
        return LOCAL.name
    return OFFLINE.name


def provider_for(config: Config) -> Provider:
    """The provider the configuration means (`auto` resolved)."""
    return lookup(resolve_provider(config))


def missing_key(config: Config, env: Mapping[str, str]) -> str:
    """What the configured provider lacks before it can answer ("" when nothing): an
    openai provider with no key in the environment and no base_url of its own, say.
    `auto` lacks nothing: it means openai only with a base_url."""
    if config.llm.provider == "auto":
        return ""
    return lookup(config.llm.provider).missing(config, env)
