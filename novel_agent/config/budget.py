"""Token budgets per stage: min(window, cap) - the stage's max output - a margin.

Pure: the model's limits (`ModelLimits`) are passed in; reading the model
table and resolving the provider happen at the edge (windows.limits_for).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from novel_agent.config.settings import Config


@dataclass(frozen=True)
class ModelLimits:
    """What one model accepts: its context window and its longest answer."""

    model: str
    window: int
    max_output: int
    known: bool
    warning: str = ""
    matched: str = ""   # the table entry that matched, "" if none


@dataclass(frozen=True)
class Budget:
    """How many prompt tokens one stage may send, and how that was decided."""

    stage: str
    model: str
    window: int
    cap: int
    max_output: int
    margin: int
    warning: str = ""

    @property
    def tokens(self) -> int:
        """The prompt budget (may be <= 0 when the settings leave no room)."""
        return min(self.window, self.cap) - self.max_output - self.margin

    def left_after(self, prompt_tokens: int) -> int:
        """Tokens the window leaves for an answer after a request of `prompt_tokens` (the
        margin kept): a repair, a continuation or a revision is longer than the fitted
        prompt, so its answer may be given less."""
        return self.window - self.margin - prompt_tokens

    def leaving(self, tokens: int) -> Budget:
        """This budget with `tokens` more kept free after the prompt: the budget of a
        prompt that a request adds `tokens` to (the audit's revision adds the draft)."""
        return replace(self, max_output=self.max_output + tokens)


def stage_budget(config: Config, stage: str, limits: ModelLimits) -> Budget:
    """The budget of `stage` ("planner", "writer", "extractor", "summarizer")."""
    return Budget(stage=stage, model=limits.model, window=limits.window,
                  cap=config.context.max_prompt_tokens,
                  max_output=min(config.max_tokens(stage), limits.max_output),
                  margin=config.context.margin, warning=limits.warning)
