"""`novel doctor --fix` for a project whose later scenes were deleted by hand.

After tick 10, deleting scenes 8–10 leaves plans 8–10, summaries over them, and
memory holding their facts: the next tick would stop at plans/plan_008.yaml,
or write scene 8 against a past that no longer exists. `repair` brings them
back to tick 7 (the last scene left), in one transaction: the plans, prompt
logs and summaries past it go; memory and state.yaml are those of the
history's entry after tick 7, made before tick 8 (hand edits of memory made
before tick 8 included). Everything else stays as it is: the scenes, the plans
and summaries up to tick 7, lore, the note, project.yaml. What goes is in the
history (the deletion's own entry). Without that entry, memory is re-derived
from the records of ticks 1..7 (rederive.derive_range, the clock too). A revise of a scene up
to 7 made after tick 8 was written is not re-applied to memory: run it again.
"""

from __future__ import annotations

import os
import re

from novel_agent.audit.clock import CLOCK_FILE
from novel_agent.config.settings import Config
from novel_agent.history.restore import differences
from novel_agent.history.store import Entry, History
from novel_agent.revision.rederive import Derived, derive_range
from novel_agent.story.memory.files import stage_memory
from novel_agent.story.memory.read import load_memory
from novel_agent.story.memory.store import Memory
from novel_agent.story.project.folder import Project
from novel_agent.story.summaries import load_tree
from novel_agent.tick.prompt_log import log_tick

PLAN_RE = re.compile(r"^plan_(\d+)\.yaml$")
FOLLOWS_SCENES = ("memory", ".novel/state.yaml")


def orphans(project: Project) -> tuple[list[int], list[str]]:
    """Plans after the last scene, and summaries reaching past it."""
    last = project.tick()
    names = os.listdir(project.plans_dir) if project.plans_dir.is_dir() else []
    plans = sorted(int(m.group(1)) for n in names if (m := PLAN_RE.match(n)) and
                   int(m.group(1)) > last)
    tree = load_tree(project.summaries_dir)
    summaries = sorted(d.name for d in tree.docs.values() if d.last > last)
    if tree.overall is not None and tree.overall.last > last:
        summaries.append(tree.overall.name)
    return plans, summaries


def entry_before_later(history: History, tick: int) -> Entry | None:
    """The last entry after tick `tick` made before any later tick (the deletion by
    hand, recorded at tick `tick`, comes after the later ticks and is passed over)."""
    line = history.entries()
    later = next((i for i, e in enumerate(line) if e.tick > tick), None)
    if later is None:          # the history began after the deletion: it cannot help
        return None
    for entry in line[later:]:
        if entry.tick == tick:
            return entry
    return None


def repair(project: Project, config: Config) -> str:
    """Bring plans, memory, summaries and state back to the last scene on disk (the
    caller holds the lock); one line saying what was done ("" when nothing was owed)."""
    plans, summaries = orphans(project)
    if not plans and not summaries:
        return ""
    last = project.tick()
    history = History(project)
    entry = None
    if history.available:
        history.record_pending()
        entry = entry_before_later(history, last)
    txn = project.transaction(f"doctor's repair back to tick {last}")
    for tick in plans:
        txn.remove(project.plan_path(tick))
    for name in summaries:
        txn.remove(project.summaries_dir / f"{name}.md")
    logs = os.listdir(project.log_dir) if project.log_dir.is_dir() else []
    for name in logs:
        if (log_tick(name) or 0) > last:
            txn.remove(project.log_dir / name)
    if entry is not None:
        _from_history(history, entry, txn)
        how = f"memory and state as the history's entry {entry.short} holds them"
    else:
        _rederived(project, config, last, txn)
        how = "memory re-derived from the plan records"
    txn.commit()
    if history.available:
        history.record("repair", last, f"doctor: back to tick {last} after scenes were deleted "
                       "by hand")
    return (f"plans, memory, summaries and state brought back to tick {last} ({how}); "
            f"{len(plans)} plans and {len(summaries)} summaries past it went")


def _from_history(history: History, entry: Entry, txn) -> None:
    project = history.project
    changes = differences(history, "HEAD", entry.sha, FOLLOWS_SCENES)
    written = [(path, sha) for status, path, sha in changes if status != "D"]
    for (path, _), data in zip(written, history.git.blobs([sha for _, sha in written])):
        txn.stage(project.root / path, data.decode("utf-8"))
    for status, path, _ in changes:
        if status == "D":
            txn.remove(project.root / path)


def _rederived(project: Project, config: Config, last: int, txn) -> None:
    derived = derive_range(project, Derived(Memory()), 1, last, config)
    stage_memory(txn, derived.memory, project.memory_dir, load_memory(project.memory_dir))
    clock = derived.clock_text()
    if clock:
        txn.stage(project.memory_dir / CLOCK_FILE, clock)
    else:
        txn.remove(project.memory_dir / CLOCK_FILE)
    state = project.state()
    state.update(tick=last)
    for key in ("writer_tiers", "pending_checkpoints"):
        state.pop(key, None)
    project.stage_state(txn, state)
