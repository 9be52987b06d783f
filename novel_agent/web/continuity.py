"""What the Continuity pages show, read through the audit as plain data (nothing written).

The book's findings are `novel audit`'s (the rule checks; the auditor stage costs a
model call a scene and is left to `novel audit --llm`), by ConStory-Bench subtype in its
order, with the book's CED; a scene's findings are the same replay stopped at that
scene. A tick held by `audit.mode: hold` is read from .novel/held.yaml and its draft,
with the reason `novel audit accept` would refuse it, if it would.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from novel_agent.audit.book import BookAudit
from novel_agent.audit.findings import Finding
from novel_agent.audit.held import held_draft, held_draft_file, read_held
from novel_agent.books.markdown import blocks, blocks_html
from novel_agent.config.settings import Config
from novel_agent.errors import FileFormatError, ProjectError
from novel_agent.files import read_bytes
from novel_agent.story.project.folder import Project
from novel_agent.story.scenes import scene_ticks, word_count
from novel_agent.tick.stages.audit import audit_project


@dataclass
class HeldView:
    """A tick the audit held: what held.yaml says, the draft as HTML, whether it can be
    accepted as it is (`refused`: why not)."""

    tick: int
    title: str
    findings: list[Finding]
    html: str = ""
    words: int = 0
    draft: str = ""                # the draft's file, relative to the project
    refused: str = ""              # why `accept` would be refused ("" when it would land)
    notes: list[str] = field(default_factory=list)


def continuity_page(project: Project, config: Config) -> dict[str, Any]:
    """The book's audit (None when it has no scene yet), by subtype, and the held tick."""
    book: BookAudit | None = None
    if scene_ticks(project.scenes_dir):
        book = audit_project(project, config)
    return {"book": book, "subtypes": book.subtypes if book else {},
            "held": held_view(project)}


def scene_findings(project: Project, config: Config, tick: int) -> list[Finding]:
    """Scene `tick`'s findings, as the book's audit finds them (the scenes before it
    replayed); ProjectError when there is no such scene."""
    if not project.scene_path(tick).is_file():
        raise ProjectError(f"no scene {tick} in {project.name}",
                           path=str(project.scene_path(tick)))
    return audit_project(project, config, first=tick, last=tick).findings


def held_view(project: Project) -> HeldView | None:
    """The held tick, or None when none is."""
    held = read_held(project.novel_dir)
    if held is None:
        return None
    data, findings = held
    tick = data["tick"] if isinstance(data.get("tick"), int) else 0
    view = HeldView(tick, str(data.get("title") or ""), findings)
    try:
        draft = held_draft(project.novel_dir, project.tick() + 1)
        prose = draft.prose
    except ProjectError as exc:
        view.refused = str(exc)
        prose = _draft_text(project, data)
    view.html = "\n".join(blocks_html(blocks(prose, view.title), "h4")) if prose else ""
    view.words = word_count(prose)
    view.draft = held_draft_file(project.novel_dir, data).relative_to(project.root).as_posix()
    return view


def _draft_text(project: Project, data: dict[str, Any]) -> str:
    """The held draft's text as the file has it now ("" when it is gone)."""
    try:
        return read_bytes(held_draft_file(project.novel_dir, data)).decode("utf-8")
    except (OSError, UnicodeDecodeError, FileFormatError):
        return ""
