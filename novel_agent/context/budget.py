"""Token budgets per stage: min(window, cap) - the stage's max output - a margin."""

from __future__ import annotations

from dataclasses import dataclass

from ..config import Config
from ..models import model_id, resolve_provider
from ..windows import ModelLimits, model_limits


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


def limits_for(config: Config) -> ModelLimits:
    """The model's limits; the local provider's window is llama.cpp's n_ctx."""
    override = config.context.window
    if not override and resolve_provider(config) == "local":
        override = config.llm.local_context
    return model_limits(model_id(config), override)


def stage_budget(config: Config, stage: str, limits: ModelLimits | None = None) -> Budget:
    """The budget of `stage` ("planner", "writer", "extractor", "summarizer")."""
    limits = limits or limits_for(config)
    return Budget(stage=stage, model=limits.model, window=limits.window,
                  cap=config.context.max_prompt_tokens,
                  max_output=min(config.max_tokens(stage), limits.max_output),
                  margin=config.context.margin, warning=limits.warning)
