"""`novel redo`'s work, for the command and for `novel serve`: the rewind that begins it
(history/redo.begin), tick N written again with its one-tick note, then the redo's marker
gone. The caller holds the project's lock; a failure in the tick leaves the marker, and
opening the project settles it (history/redo.settle puts the project back)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import novel_agent.tick.pipeline as pipeline
from novel_agent.config.settings import Config
from novel_agent.history import redo
from novel_agent.history.rewind import Moved
from novel_agent.story.project.folder import Project
from novel_agent.tick.events import OnStage
from novel_agent.tick.pipeline import TickResult
from novel_agent.tick.session import Session


def redo_tick(project: Project, config: Config, env: Mapping[str, str], tick: int,
              note: str = "", *, on_rewound: Callable[[Moved], None] | None = None,
              on_stage: OnStage | None = None) -> tuple[Moved, TickResult]:
    """Rewind to tick `tick`−1 (told to `on_rewound`), then write tick `tick` with `note`
    as an author's note for it alone, each stage told to `on_stage`."""
    moved = redo.begin(project, tick)
    if on_rewound:
        on_rewound(moved)
    with Session.open(project, config, env) as session:
        result = pipeline.tick(session, on_stage=on_stage, note=note)
    redo.end(project)
    return moved, result
