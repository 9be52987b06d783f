"""What becomes of a tick `audit.mode: hold` stopped, from the page, each as the CLI does
it: accept (`novel audit accept`: landed as it was held, no model asked), drop (`novel
audit drop`), and send back with a note (`novel tick --drop-held` with the note for that
tick alone, as `novel redo --note` gives one). Each holds the project's lock (LockError
when a daemon holds it); a note that is refused leaves every file as it was.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from novel_agent.audit.held import drop_held, read_held
from novel_agent.config.settings import Config
from novel_agent.errors import ProjectError
from novel_agent.story.project.folder import Project
from novel_agent.tick import pipeline
from novel_agent.tick.pipeline import TickResult, land_held
from novel_agent.tick.session import Session
from novel_agent.web.edits import form_text

MAX_NOTE = 4_000          # characters: a note for one tick, not a chapter


def no_held(project: Project) -> ProjectError:
    return ProjectError(f"{project.name} has no tick held by the continuity audit",
                        path=str(project.novel_dir))


def accept(project: Project, config: Config, env: Mapping[str, str]) -> TickResult:
    """Land the held tick as it was held (ProjectError saying why when it cannot be)."""
    with project.locked(), Session.open(project, config, env) as session:
        return land_held(session)


def drop(project: Project) -> dict[str, Any]:
    """Discard the held tick (its draft and findings); what held.yaml said."""
    with project.locked():
        dropped = drop_held(project.novel_dir)
    if dropped is None:
        raise no_held(project)
    return dropped


def checked_note(project: Project, note: str) -> str:
    """The note as the tick is given it, or a ProjectError saying what is wrong with it."""
    note = form_text(note).strip()
    if not note:
        raise ProjectError("a draft is sent back with a note: say what the tick should do "
                           "otherwise (or drop the draft)", path=str(project.novel_dir))
    if len(note) > MAX_NOTE:
        raise ProjectError(f"the note is {len(note):,} characters, over the {MAX_NOTE:,} a "
                           "note for one tick may have", path=str(project.novel_dir))
    return note


def send_back(project: Project, config: Config, env: Mapping[str, str],
              note: str) -> TickResult:
    """Discard the held tick and write it again with `note` for that tick alone; the new
    tick is audited as any (AuditHoldError when it is held in its turn)."""
    note = checked_note(project, note)
    with project.locked(), Session.open(project, config, env) as session:
        if read_held(project.novel_dir) is None:
            raise no_held(project)
        drop_held(project.novel_dir)
        return pipeline.tick(session, note=note)
