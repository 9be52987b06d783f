"""The provider names `llm.provider` may take: `auto`, the built-in ones, and those installed
packages register under the entry point group `novel_agent.providers`.

Only the names live here, so that a configuration is checked before any model code is
imported; what each provider is and can do is models/providers.py's registry.
"""

from __future__ import annotations

import importlib.metadata

BUILT_IN = ("openai", "anthropic", "llm", "local", "offline")   # models/providers.py registers each
GROUP = "novel_agent.providers"


def installed() -> dict[str, importlib.metadata.EntryPoint]:
    """The entry points installed packages declare in GROUP, by name (nothing is loaded)."""
    return {ep.name: ep for ep in importlib.metadata.entry_points(group=GROUP)}


def provider_names() -> tuple[str, ...]:
    """Every name `llm.provider` may take: auto, the built-in providers, then the
    installed ones in alphabetical order."""
    extra = sorted(name for name in installed() if name not in BUILT_IN and name != "auto")
    return ("auto", *BUILT_IN, *extra)


def is_provider(name: str) -> bool:
    """Whether `name` is a provider's name (the installed ones are looked up only for a
    name that is not built in)."""
    return name == "auto" or name in BUILT_IN or name in installed()
