"""A tick held by `audit.mode: hold`: `.novel/held.yaml` (tick, title, the draft's
path, the findings), written when the tick stops, read by `novel status`, removed by
the next tick that commits."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from novel_agent.audit.findings import Finding
from novel_agent.files import dump_yaml, read_yaml

HELD_FILE = "held.yaml"


def held_text(tick: int, title: str, findings: list[Finding], draft: str) -> str:
    """The text of held.yaml."""
    return dump_yaml({"tick": tick, "title": title, "draft": draft,
                      "findings": [f.to_dict() for f in findings]})


def read_held(novel_dir: Path) -> tuple[dict[str, Any], list[Finding]] | None:
    """What held.yaml says (its fields, its findings), or None when no tick is held."""
    path = novel_dir / HELD_FILE
    if not path.is_file():
        return None
    data = read_yaml(path, {})
    if not isinstance(data, dict):
        return None
    found = [Finding.from_dict(f) for f in data.get("findings") or [] if isinstance(f, dict)]
    return data, found
