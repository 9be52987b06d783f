"""Stage 4, commit: the scene, its plan, memory and the tick counter land together."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from novel_agent.files import dump_yaml
from novel_agent.story.journal import Cut
from novel_agent.story.memory import Memory
from novel_agent.story.memory_files import stage_memory
from novel_agent.story.project import Project
from novel_agent.story.scenes import Scene


def commit_tick(project: Project, scene: Scene, plan_record: dict[str, Any], memory: Memory,
                before: Memory, state: dict[str, Any], extra: dict | None = None) -> list[Path]:
    """Write everything a tick produced in one transaction (all or nothing): only what
    changed, so a commit costs the same at tick 10 and tick 10,000 (memory.stage_memory).

    The scene and plan files must be new: one already there (a file the user moved in,
    a counter gone stale) stops the commit with an OverwriteError naming it.

    `extra` maps further paths to texts (context reports) that land with the tick, to
    a Cut (a prompt log that loses its messages), or to None: a file the tick removes
    (a prompt log past context.prompt_log_ticks).
    Returns the files written or removed (for the index: what it must look at again).
    """
    txn = project.transaction()
    txn.stage(project.scene_path(scene.tick), scene.render(), new=True)
    txn.stage(project.plan_path(scene.tick), dump_yaml(plan_record), new=True)
    stage_memory(txn, memory, project.memory_dir, before)
    for path, text in (extra or {}).items():
        if text is None:
            txn.remove(path)
        elif isinstance(text, Cut):
            txn.cut(path, text)
        else:
            txn.stage(path, text)
    project.stage_state(txn, state)
    txn.commit()
    return list(txn.ops)
