"""A revise a kill cut short: the marker it lands with its transaction, and `settle`,
which the next command that opens the project runs (through recovery.reconcile)."""

from __future__ import annotations

from novel_agent.files import read_yaml
from novel_agent.history.restore import move_to
from novel_agent.history.store import History
from novel_agent.story.project.folder import Project

REVISE_MARKER = "revise.yaml"


def settle_revise(project: Project) -> list[str]:
    """After a kill inside a revise: the project back as it was before it (files and
    branch at the entry the marker names); a notice when it did."""
    path = project.novel_dir / REVISE_MARKER
    if not path.is_file():
        return []
    marker = read_yaml(path, {})
    history = History(project)
    sha = history.git.resolve(str(marker.get("from"))) if isinstance(marker, dict) else None
    if sha is None:
        path.unlink()
        return []
    head = history.head()
    if head.kind == "revise" and head.sha != sha:     # it landed; only the marker was left
        path.unlink()
        return []
    current = history.stage()
    move_to(history, sha, {f"refs/heads/{history.git.branch()}": sha}, {path: None},
            current=current, label=f"putting back the interrupted revise of scene "
                                   f"{marker.get('tick')}")
    return [f"the revise of scene {marker.get('tick')} was interrupted: the project is back "
            "as it was before it (run it again)"]
