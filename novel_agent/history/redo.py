"""`novel redo [N] [--note TEXT]`: rewind to tick N−1 and write tick N again.

The old scene N and what followed stay reachable (rewind's kept tag, and the undo
point). A redo is two transactions, the rewind and the new tick; between them a
marker, `.novel/redo.yaml` (landed with the rewind), says where the project was,
the tag the rewind made and the undo point before it. If the process dies before
the new tick lands, the next command that opens the project (`settle`, from
recovery.reconcile) moves it back, the tag gone and the undo point as it was: the
project is before the redo or after it, never rewound and left there.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from novel_agent.files import dump_yaml, read_yaml
from novel_agent.history.git import HistoryError
from novel_agent.history.restore import move_to
from novel_agent.history.rewind import (
    UNDO,
    Moved,
    history_for,
    keep_tag,
    move_branch,
    planned,
    readable,
)
from novel_agent.history.store import Entry, History
from novel_agent.story.project.folder import Project

MARKER = "redo.yaml"


def _target(history: History, tick: int) -> Entry:
    head = history.head()
    if not 1 <= tick <= head.tick:
        raise HistoryError(f"no tick {tick} to redo: the project's ticks are 1–{head.tick}",
                           path=str(history.project.scenes_dir))
    return history.entry_at(tick - 1)


def redoing(project: Project, tick: int) -> Moved:
    """What `begin(project, tick)` would do, nothing written (for a confirmation): the
    rewind to tick `tick`−1, and the tag that keeps what is there now."""
    history = readable(project)
    return planned(history, _target(history, tick))


def begin(project: Project, tick: int, now: Callable[[], datetime] | None = None) -> Moved:
    """Rewind to tick `tick`−1 for a redo of tick `tick` (the caller holds the lock)."""
    history = history_for(project, now)
    head = history.head()
    target = _target(history, tick)
    branch = history.git.branch()
    kept = keep_tag(history, branch, head)
    marker = {"tick": tick, "from": head.sha, "branch": branch, "kept": kept,
              "undo": history.git.resolve(f"{UNDO}/{branch}") or ""}
    return move_branch(history, target,
                       files={project.novel_dir / MARKER: dump_yaml(marker)},
                       label=f"the rewind that begins the redo of tick {tick}", kept=kept)


def end(project: Project) -> None:
    """The redone tick has landed: the marker goes."""
    (project.novel_dir / MARKER).unlink(missing_ok=True)


def settle(project: Project) -> list[str]:
    """After a kill: a redo whose tick landed is done (the marker goes); one whose tick
    did not is undone (the project back where it was). A notice when either."""
    path = project.novel_dir / MARKER
    if not path.is_file():
        return []
    marker = read_yaml(path, {})
    tick = int(marker.get("tick") or 0) if isinstance(marker, dict) else 0
    if project.tick() >= tick > 0:
        end(project)
        return []
    history = History(project)
    back = history.head(str(marker.get("from")))
    branch = history.git.branch()
    refs: dict[str, str | None] = {f"refs/heads/{branch}": back.sha}
    tag = f"refs/tags/{marker['kept']}" if marker.get("kept") else ""
    if tag and history.git.resolve(tag) == back.sha:      # the tag the redo made goes
        refs[tag] = None
    if "undo" in marker:                                  # and the undo is as it was
        refs[f"{UNDO}/{branch}"] = marker["undo"] or None
    move_to(history, back.sha, refs, {path: None},
            label=f"putting back the interrupted redo of tick {tick}")
    if tag and history.git.resolve(tag) is not None:      # packed since: git removes it
        history.git.run("update-ref", "-d", tag, back.sha)
    return [f"the redo of tick {tick} was interrupted before its tick landed: the project "
            f"is back at tick {back.tick}"]
