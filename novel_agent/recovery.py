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

from pathlib import Path
from typing import TYPE_CHECKING

from novel_agent.errors import FileFormatError
from novel_agent.files import temp_files
from novel_agent.revision.hooks import reconciled
from novel_agent.story.journal import journal_targets
from novel_agent.story.memory import FOLDERS
from novel_agent.story.memory_files import stage_migration
from novel_agent.story.scenes import SCENE_RE

if TYPE_CHECKING:
    from novel_agent.story.project import Project


def temp_folders(project: Project) -> list[Path]:
    """Folders where a killed write can leave a temp file."""
    memory = project.memory_dir
    return [project.root, project.scenes_dir, project.plans_dir, project.summaries_dir, memory,
            *(memory / kind for kind in FOLDERS), project.novel_dir,
            project.log_dir, project.drafts_dir, project.novel_dir / "txn"]


def journal_tick(project: Project) -> int | None:
    """The tick whose scene an unfinished commit journal lands, if any."""
    ticks = [int(m.group(1)) for target in journal_targets(project.novel_dir / "txn")
             if (m := SCENE_RE.match(Path(target).name))]
    return max(ticks) if ticks else None


def finish_commit(project: Project) -> list[str]:
    """Roll a journaled commit forward; a notice when there was one."""
    pending = journal_tick(project)
    if not project.recover():
        return []
    what = f"the commit of tick {pending}" if pending else "a commit"
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


def reconcile(project: Project) -> list[str]:
    """Finish, clean, migrate and re-count (the caller holds the lock); the notices, in
    order."""
    cleaned = remove_temp_files(project)   # first: the journal never names a temp file
    return (finish_commit(project) + cleaned + migrate_memory(project) + sync_counter(project)
            + reconciled(project))         # last: what changed by hand gets its entry
