"""The one progress event of a tick: a stage finished (the CLI, the daemon and the web
page all consume it).

    plan -> write -> extract -> commit -> summarize (-> outline: a revision at a checkpoint)
    each emits StageEvent(stage, seconds, tokens in/out/cached, calls, ...)

`commit_next` is set on the last model stage before the commit: from then on the tick
lands whatever happens (the daemon stops taking a second Ctrl-C as "abandon it").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

Stage = str     # a stage declared in config/stages.py ("planner", ...), or "commit"


@dataclass(frozen=True)
class StageEvent:
    """How one stage of a tick went."""

    stage: Stage
    seconds: float
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    calls: int = 1
    commit_next: bool = False          # the commit comes next: the tick will land
    warnings: tuple[str, ...] = ()     # a summarizer's warnings (a stage's own come with its tick)
    failure: str = ""                  # why a summarizer stopped, "" when it did not

    @property
    def cached_share(self) -> float:
        """The share of the prompt read from the provider's prompt cache."""
        return self.cached_tokens / max(self.prompt_tokens, 1)


OnStage = Callable[[StageEvent], None]
