"""The stages' behaviour, found through their declarations (config/stages.py).

Every stage is declared once, as a `StageSpec` line in config/stages.py; the ones a
tick runs every time (kind TICK: the planner, the writer, the extractor) say in it
which module holds their behaviour, and that module names it `STAGE`: a `Stage`
that builds the stage's prompt from the draft, asks the model, and applies the
answer to the draft, each returning what it made (tick/draft.py).

The tick runs them in the order they are declared (tick/pipeline.py), `novel context
--stage` can show any of them, and the settings, the live view, the ledger and the
reports read their names from the declarations; so a new stage is one module and
one `declare` line:

    # my_stage.py
    STAGE = Stage("blurb", build=build, ask=ask, apply=apply)
    # config/stages.py (or a plugin, or a test)
    declare(StageSpec("blurb", "Blurb", "blurb", "my_stage", "blurb.j2", slot=4))
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module
from typing import Any, Generic, TypeVar

from novel_agent.config import stages as declared
from novel_agent.config.stages import TICK, StageSpec
from novel_agent.models.ask import StageCall
from novel_agent.tick.draft import TickContext, TickDraft

A = TypeVar("A")


@dataclass(frozen=True)
class Stage(Generic[A]):
    """How one stage of the tick is built, asked and applied.

    `build(ctx, draft)`: the draft with the stage's prompt (`draft.built[name]`) and
    whatever it read to make it; `ask(ctx, draft)`: the model's answer to that prompt
    (of type A) and the call that got it; `apply(ctx, draft, answer, call)`: the draft
    with the answer taken in (it may ask the model again, noting each completion in
    `call`). A ModelError from `ask` or `apply` fails the tick, the prose kept."""

    name: str
    build: Callable[[TickContext, TickDraft], TickDraft]
    ask: Callable[[TickContext, TickDraft], tuple[A, StageCall]]
    apply: Callable[[TickContext, TickDraft, A, StageCall], TickDraft]

    @property
    def spec(self) -> StageSpec:
        found = declared.spec(self.name)
        assert found is not None, f"stage {self.name!r} is not declared"
        return found


def stage(name: str) -> Stage[Any]:
    """The behaviour of the declared stage `name` (its module's STAGE)."""
    spec = declared.spec(name)
    if spec is None or not spec.module:
        raise KeyError(f"no stage {name!r} with a module is declared")
    found = getattr(import_module(spec.module), "STAGE", None)
    if not isinstance(found, Stage) or found.name != name:
        raise TypeError(f"{spec.module} has no STAGE for the stage {name!r}")
    return found


def tick_stages() -> tuple[Stage[Any], ...]:
    """The stages every tick runs, in the order they are declared."""
    return tuple(stage(spec.name) for spec in declared.stages() if spec.kind == TICK)
