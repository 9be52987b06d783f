"""Running ticks in tests: one session per call, the model chosen explicitly."""

from __future__ import annotations

from datetime import UTC, datetime

from novel_agent.models.offline import OfflineModel
from novel_agent.story.project.recovery import reconciled
from novel_agent.tick.pipeline import TickResult, tick
from novel_agent.tick.session import Session
from tests.support.scripted import ScriptedModel

NOW = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


def run_ticks(project, n: int = 1, model=None, *, offline_seed: int | None = None,
              config=None, now=NOW) -> list[TickResult]:
    """Run `n` ticks on `project` in one session, holding its lock.

    `model` None: the offline model (seed `offline_seed` or 0). A ScriptedModel with
    `offline_seed`: the offline model of that seed answers what it has nothing queued
    for (fed by the session's story source, as in the product).
    """
    config = config or project.config()

    def make():
        seed = offline_seed or 0
        if model is None:
            return OfflineModel(seed=seed)
        if isinstance(model, ScriptedModel) and offline_seed is not None:
            model.otherwise = OfflineModel(seed=seed)
        return model

    with reconciled(project), Session.open(project, config, make_model=make, now=lambda: now) as session:
        return [tick(session) for _ in range(n)]
