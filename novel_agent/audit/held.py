"""A tick held by `audit.mode: hold`: `.novel/held.yaml` (tick, title, the draft's
path, the findings, and the tick's plan record: its plan, tool results and
extraction), written when the tick stops, read by `novel status` and `novel tick`
(which will not write the held tick again unawares), landed as it is by `novel
audit accept` (no model called), discarded by `novel audit drop`, removed by the
commit of that tick."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from novel_agent.audit.findings import Finding
from novel_agent.errors import ModelResponseError, ProjectError
from novel_agent.files import dump_yaml, read_bytes, read_yaml
from novel_agent.story.decisions import (
    Extraction,
    Plan,
    extraction_from_json,
    plan_as_named,
    plan_from_record,
)

HELD_FILE = "held.yaml"


def held_text(tick: int, title: str, findings: list[Finding], draft: str, *,
              record: dict[str, Any] | None = None, prose: str = "") -> str:
    """The text of held.yaml; `record` (the plan record the tick would have committed)
    and the sha256 of `prose` let `novel audit accept` land the draft as it was held."""
    data: dict[str, Any] = {"tick": tick, "title": title, "draft": draft,
                            "findings": [f.to_dict() for f in findings]}
    if record is not None:
        data |= {"sha256": _sha(prose), "record": record}
    return dump_yaml(data)


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


@dataclass
class HeldDraft:
    """A held tick as `novel audit accept` lands it."""

    tick: int
    prose: str
    plan: Plan
    extraction: Extraction
    tool_results: list[str]
    warnings: list[str]
    findings: list[Finding]
    named: Plan                      # the plan as its tools ran it (plan_as_named)
    cast_named: dict[str, Any] | None = None


def held_draft(novel_dir: Path, next_tick: int) -> HeldDraft:
    """The held tick, to be landed as tick `next_tick`; a ProjectError says why it cannot
    be: none is held, the story moved on since, it was held with no plan record kept,
    or its draft is gone or was edited (accept lands a draft as it was held)."""
    path = novel_dir / HELD_FILE
    held = read_held(novel_dir)
    if held is None:
        raise ProjectError("no tick is held by the continuity audit (audit.mode: hold holds "
                           "one whose findings stop it)", path=str(path))
    data, findings = held
    tick, record, draft = data.get("tick"), data.get("record"), held_draft_file(novel_dir, data)
    if tick != next_tick:
        raise ProjectError(f"the held tick {tick} is not the next tick ({next_tick}): the story "
                           "has moved since it was held; `novel audit drop` discards it",
                           path=str(path))
    if not isinstance(record, dict) or not isinstance(record.get("extraction"), dict):
        raise ProjectError(f"tick {tick} was held with no plan record kept (by an older "
                           "version): it cannot be landed as it is; `novel audit drop` "
                           "discards it and `novel tick` writes it again", path=str(path))
    if not draft.is_file():
        raise ProjectError(f"the held draft {draft} is gone; `novel audit drop` discards the "
                           "held tick", path=str(draft))
    prose = read_bytes(draft).decode("utf-8").removesuffix("\n")
    if _sha(prose) != data.get("sha256"):
        raise ProjectError(f"the held draft {draft} was edited after it was held: accept lands "
                           "a draft as it was held (its extraction is of that prose); undo the "
                           "edit, or `novel audit drop` and tick again", path=str(draft))
    try:
        extraction = extraction_from_json(record["extraction"], beat=True, tension=True)
    except ModelResponseError as exc:
        raise ProjectError(f"the held tick's extraction cannot be read ({exc})",
                           path=str(path)) from exc
    return HeldDraft(tick=tick, prose=prose, plan=plan_from_record(record),
                     extraction=extraction, tool_results=_texts(record.get("tool_results")),
                     warnings=_texts(record.get("warnings")), findings=findings,
                     named=plan_as_named(record), cast_named=record.get("cast_named"))


def drop_held(novel_dir: Path) -> dict[str, Any] | None:
    """Discard the held tick: held.yaml and its draft; what held.yaml said, or None when
    no tick was held."""
    held = read_held(novel_dir)
    if held is None:
        return None
    data, _ = held
    held_draft_file(novel_dir, data).unlink(missing_ok=True)
    (novel_dir / HELD_FILE).unlink(missing_ok=True)
    return data


def held_draft_file(novel_dir: Path, data: dict[str, Any]) -> Path:
    """The held draft: the file of that name among the project's drafts (wherever the
    project has moved since)."""
    tick = data.get("tick")
    return novel_dir / "drafts" / (Path(str(data.get("draft") or "")).name or
                                   f"draft_{tick if isinstance(tick, int) else 0:03d}.md")


def _texts(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
