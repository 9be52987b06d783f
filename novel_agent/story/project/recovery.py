"""Bringing a project back to what its files say, with one line per thing done.

`reconcile(project)` runs under the project's lock whenever a command opens a
project (the tick takes the lock for it; read-only commands try to): it
finishes a commit a crash interrupted (the journal), removes the temporary
files of killed writes, moves memory written in the old layout (one file for
all loops, one for all relationships) to one file per item, and sets the tick
counter in state.yaml (a cache) to the scenes on disk. Each returns a notice
for the user; nothing else is touched, and no scene, plan or memory file is
ever overwritten here.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from novel_agent.errors import FileFormatError, NovelError
from novel_agent.files import temp_files
from novel_agent.story.memory.files import stage_migration
from novel_agent.story.memory.read import FOLDERS
from novel_agent.story.project.folder import Project, journal_tick
from novel_agent.story.project.journal import interrupted
from novel_agent.story.project.state import FIX as STATE_FIX


def temp_folders(project: Project) -> list[Path]:
    """Folders where a killed write can leave a temp file."""
    memory = project.memory_dir
    return [project.root, project.scenes_dir, project.plans_dir, project.summaries_dir, memory,
            *(memory / kind for kind in FOLDERS), project.novel_dir,
            project.log_dir, project.drafts_dir, project.novel_dir / "txn"]


def finish_commit(project: Project) -> list[str]:
    """Roll a journaled commit forward, or drop one a kill cut before its journal; a
    notice when there was one (naming it when it said what it was: a rewind, a switch)."""
    pending = journal_tick(project.novel_dir)
    found = interrupted(project.novel_dir / "txn")
    if found is None:
        return []
    label, _ = found
    if not project.recover():
        return [f"{label or 'a commit'} was interrupted before it changed anything: the project "
                f"is as it was before it{' (run it again)' if label else ''}"]
    what = label or (f"the commit of tick {pending}" if pending else "a commit")
    return [f"recovered: {what} was interrupted and has been finished"]


def remove_temp_files(project: Project) -> list[str]:
    """Delete what killed writes left behind; a notice when there were any."""
    leftovers = temp_files(project.root, temp_folders(project))
    for path in leftovers:
        path.unlink(missing_ok=True)
    if not leftovers:
        return []
    s = "s" if len(leftovers) != 1 else ""
    return [f"removed {len(leftovers)} temporary file{s} left by an interrupted write"]


def sync_counter(project: Project) -> list[str]:
    """Make state.yaml's tick counter say what the scenes on disk say."""
    exists = project.state_file.is_file()
    state, disk = project.state(), project.tick()
    if exists and state.get("tick") == disk:
        return []
    project.update_state(tick=disk)
    if not exists:
        return [f"state.yaml was missing: rebuilt, the tick counter follows the scenes on disk "
                f"(tick {disk})"]
    return [f"state.yaml said tick {state.get('tick', 'nothing')}, the scenes on disk end at "
            f"tick {disk}: the counter now follows the scenes"]


def rebuild_state(project: Project) -> list[str]:
    """Replace a state.yaml that cannot be read (invalid YAML, a value of the wrong type,
    not UTF-8) with one whose tick counter follows the scenes (the caller holds the lock);
    what `novel doctor --fix` does. A notice when it did. The rest of what it held is a
    cache too: the checkpoints owed are counted again from the summaries, the steer note is
    read again from its next tick."""
    try:
        project.state()
        return []
    except NovelError as exc:
        why = str(exc).removesuffix(f"; {STATE_FIX}")
    project.state_file.unlink()
    project.update_state(tick=project.tick())
    return [f"state.yaml could not be read ({why}): rebuilt, the tick counter follows the "
            f"scenes on disk (tick {project.tick()})"]


def migrate_memory(project: Project) -> list[str]:
    """Move the old memory/loops.yaml and relationships.yaml to one file per loop and per
    relationship, in one transaction; a notice when it did. An old file that cannot be
    read is left as it is (what reads memory names the line; so does `novel doctor`)."""
    txn = project.transaction()
    try:
        moved = stage_migration(txn, project.memory_dir)
    except FileFormatError:
        return []
    if not moved:
        return []
    txn.commit()
    what = " and ".join(f"memory/{kind}.yaml ({n} {kind if n != 1 else kind[:-1]}) to "
                        f"memory/{kind}/" for kind, n in moved.items())
    return [f"moved {what}: one file each, so a tick writes only what changed"]


@contextmanager
def reconciled(project: Project, wait: float = 0.0) -> Iterator[list[str]]:
    """Hold the project's lock (waiting up to `wait` s) with the project reconciled:
    an interrupted commit finished, temp files removed, the counter re-counted. Yields
    the notices, one line per thing done."""
    project.acquire_lock(wait)
    try:
        yield reconcile(project)
    finally:
        project.release_lock()


def reconcile(project: Project) -> list[str]:
    """Finish, clean, migrate and re-count (the caller holds the lock); the notices, in
    order."""
    cleaned = remove_temp_files(project)   # first: the journal never names a temp file
    return finish_commit(project) + cleaned + migrate_memory(project) + sync_counter(project)
