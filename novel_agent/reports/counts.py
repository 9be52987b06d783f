"""Whose token counts the usage ledger holds, set against ours.

A row of the ledger has the prompt tokens the model reported: for an
OpenAI-compatible server, Anthropic's API or the embedded llama.cpp (`provider`
openai, anthropic or local), the server's own count from its `usage`. Ours is the count the
context engine made of the same prompt (tiktoken, or the local model's
tokenizer) and saved in the prompt log. Where both exist for a call (one call
of a stage at a tick, one log) and they differ, `novel usage` and `novel
stats` say which figure is which.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from novel_agent.config.stages import ticked
from novel_agent.models.providers import known
from novel_agent.reports.costs import Row


@dataclass(frozen=True)
class Counts:
    """The ledger's prompt tokens against ours, over the calls both counted."""

    calls: int = 0          # calls compared
    theirs: int = 0         # the server's count of their prompts (the ledger)
    ours: int = 0           # ours (the prompt logs)
    encoding: str = ""      # what we counted with

    @property
    def differ(self) -> bool:
        return self.calls > 0 and self.theirs != self.ours

    def line(self) -> str | None:
        """One line naming each figure, or None when there is nothing to tell apart."""
        if not self.differ:
            return None
        change = (self.theirs - self.ours) / self.ours if self.ours else 0.0
        return (f"prompt tokens above are the server's own count; ours "
                f"({self.encoding or 'our count'}) of {self.calls} of those prompts: "
                f"{self.ours:,}, the server's {self.theirs:,} ({change:+.0%})")

    def to_dict(self) -> dict[str, Any]:
        return {"source": "server" if self.calls else "", "calls": self.calls,
                "server": self.theirs, "ours": self.ours, "encoding": self.encoding}


def compare_counts(rows: Iterable[Row],
                   logs: Mapping[int, Mapping[str, list[dict[str, Any]]]]) -> Counts:
    """The server-counted rows against the prompt logs (tick -> stage -> reports): only
    where a stage made one call at a tick and logged one prompt (a repair's second call
    has no log of its own)."""
    calls: dict[tuple[int, str], list[Row]] = {}
    own: dict[str, bool] = {}
    for row in rows:
        name = str(row.get("provider") or "")
        if name not in own:
            own[name] = _own_counts(name)
        if own[name] and row.get("stage") in ticked() and not row.get("error"):
            calls.setdefault((row.get("tick") or 0, str(row["stage"])), []).append(row)
    n = theirs = ours = 0
    encoding = ""
    for (tick, stage), made in sorted(calls.items()):
        reports = (logs.get(tick) or {}).get(stage) or []
        if len(made) != 1 or len(reports) != 1 or not isinstance(reports[0].get("tokens"), int):
            continue
        n, theirs = n + 1, theirs + int(made[0].get("prompt_tokens") or 0)
        ours += reports[0]["tokens"]
        encoding = str(reports[0].get("encoding") or encoding)
    return Counts(n, theirs, ours, encoding)


def _own_counts(name: str) -> bool:
    """Whether the provider a ledger row names reports the server's own token count (a
    name nothing registers any more: no)."""
    provider = known(name) if name else None
    return provider is not None and provider.own_counts
