"""The prompt log: one JSON file per stage per tick under `.novel/log/`.

Each holds the context report and the messages sent; the next build of the
same stage reads the previous one to measure the prefix it shares.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from .project import Project

if TYPE_CHECKING:
    from .stage_prompts import Built


def log_path(project: Project, tick: int, stage: str) -> Path:
    return project.log_dir / f"tick_{tick:03d}_{stage}.json"


def previous_messages(project: Project, tick: int, stage: str) -> list[dict[str, str]] | None:
    """The messages the same stage sent at the previous tick, if logged."""
    path = log_path(project, tick - 1, stage)
    try:
        return json.loads(path.read_text(encoding="utf-8")).get("messages")
    except (FileNotFoundError, ValueError, AttributeError):
        return None


def log_text(built: "Built") -> str:
    """The JSON saved under .novel/log/ for one stage of one tick."""
    return json.dumps({**built.report, "messages": built.messages}, indent=1,
                      ensure_ascii=False) + "\n"
