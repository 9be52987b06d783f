"""`novel doctor`: check a project against its own rules, and say how to fix each problem.

`diagnose(project)` lists Problems (what is wrong, the fix in words, and for the
safe ones a function that applies it): an unfinished commit journal, temp files
of killed writes, the tick counter against the scenes, gaps and duplicate
ticks, front matter against file names, files in scenes/ that are no scene
(a chapter1.md of the writer's own), plans without scenes, memory in the old
layout (memory/loops.yaml, relationships.yaml), memory files that do not parse
or validate (ids against file names included), summaries beyond the last
scene, lore files and entries the loader skips, the index's health (a read-only
one is read as it is, not called damaged), a project that cannot be written,
a stale lock, a project.yaml that does not load (the error with its line), and
committed scenes that hold the prompt's scaffolding or are under half of
generation.scene_min_words. `fix(project)` applies the safe fixes and checks again. Reads
everything, changes nothing unless asked.
"""

from __future__ import annotations

import fcntl
import os
import re
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from novel_agent.errors import NovelError
from novel_agent.files import temp_files
from novel_agent.index.db import quick_check
from novel_agent.revision.repair import repair
from novel_agent.story.lore import load_lorebook
from novel_agent.story.memory import LEGACY, load_memory
from novel_agent.story.project import Project, journal_tick
from novel_agent.story.recovery import migrate_memory, temp_folders
from novel_agent.story.scenes import SCENE_RE, load_scene, scene_files, scene_ticks
from novel_agent.story.summaries import load_tree
from novel_agent.text.cleanup import scaffold_lines

PLAN_RE = re.compile(r"^plan_(\d+)\.yaml$")
_BACK = ("bring plans, memory, summaries and state back to tick {last}, the last scene (what "
         "goes stays in the history), or restore the scenes")


@dataclass
class Problem:
    """One thing wrong, the fix in words, and how to apply it when it is safe."""

    what: str
    fix: str
    apply: Callable[[], object] | None = None

    @property
    def safe(self) -> bool:
        return self.apply is not None


def _journal(p: Project) -> list[Problem]:
    if not (p.novel_dir / "txn" / "journal.json").is_file():
        return []
    tick = journal_tick(p.novel_dir)
    return [Problem(f"an interrupted commit{f' of tick {tick}' if tick else ''} is unfinished",
                    "finish it (any command that opens the project does)", p.recover)]


def _temps(p: Project) -> list[Problem]:
    found = temp_files(p.root, temp_folders(p))
    return [Problem(f"{f.relative_to(p.root)}: a temp file of a killed write",
                    "delete it", lambda f=f: f.unlink(missing_ok=True)) for f in found]


def _counter(p: Project) -> list[Problem]:
    try:
        said = p.state().get("tick") if p.state_file.is_file() else None
    except NovelError as exc:
        return [Problem(str(exc), "rebuild state.yaml from the scenes",
                        lambda: (p.state_file.unlink(), p.update_state(tick=p.tick())))]
    if said == p.tick():
        return []
    return [Problem(f".novel/state.yaml says tick {said}, the scenes end at tick {p.tick()}",
                    "set the counter from the scenes", lambda: p.update_state(tick=p.tick()))]


def _scenes(p: Project) -> list[Problem]:
    problems, ticks = [], scene_ticks(p.scenes_dir)
    for tick in sorted({t for t in ticks if ticks.count(t) > 1}):
        problems.append(Problem(f"tick {tick} has more than one scene file",
                                "keep one: rename or move the others away"))
    missing = sorted(set(range(1, ticks[-1] + 1)) - set(ticks)) if ticks else []
    if missing:
        problems.append(Problem(f"scenes missing for ticks {_ranges(missing)}",
                                "restore them, or renumber the scenes after them"))
    for path in scene_files(p.scenes_dir):
        try:
            load_scene(path)
        except (NovelError, OSError) as exc:
            problems.append(Problem(str(exc), "fix the file by hand"))
    return problems


def _strays(p: Project) -> list[Problem]:
    """Files in scenes/ that are no scene (only scene_NNN.md is read): a chapter of the
    writer's own dropped there is not part of the story until imported."""
    names = sorted(n for n in (os.listdir(p.scenes_dir) if p.scenes_dir.is_dir() else [])
                   if not SCENE_RE.match(n) and not n.startswith(".")
                   and (p.scenes_dir / n).is_file())
    return [Problem(f"scenes/{name} is not a scene file (only scene_NNN.md are read): it is "
                    "not part of the story", f"move it out of scenes/ and bring it in with "
                    f"`novel import {name}`")
            for name in names]


def _plans(p: Project) -> list[Problem]:
    last = p.tick()
    names = os.listdir(p.plans_dir) if p.plans_dir.is_dir() else []
    orphans = sorted(int(m.group(1)) for n in names if (m := PLAN_RE.match(n)))
    return [Problem(f"plans/plan_{t:03d}.yaml has no scene after it (the last is tick {last}): "
                    "the next tick would stop there", _BACK.format(last=last),
                    lambda: repair(p, p.config()))
            for t in orphans if t > last]


def _layout(p: Project) -> list[Problem]:
    old = [kind for kind in LEGACY if (p.memory_dir / f"{kind}.yaml").is_file()]
    return [Problem(f"memory/{kind}.yaml is in the old layout (one file for all {kind})",
                    f"move each to its own file under memory/{kind}/ (any command that opens "
                    "the project does)", lambda: migrate_memory(p)) for kind in old]


def _memory(p: Project) -> list[Problem]:
    try:
        load_memory(p.memory_dir)
    except NovelError as exc:
        return [Problem(str(exc), "fix the value (the file name is the id)")]
    return []


def _lore(p: Project) -> list[Problem]:
    """Lore files and entries the loader skips (each problem names its file and line)."""
    return [Problem(problem, "fix the file (`novel lore check` shows what is read)")
            for problem in load_lorebook(p.lore_dir).problems]


def _summaries(p: Project) -> list[Problem]:
    try:
        tree = load_tree(p.summaries_dir)
    except (NovelError, OSError) as exc:
        return [Problem(str(exc), "fix the file, or remove it and run `novel summarize`")]
    if tree.last_tick() > p.tick():
        return [Problem(f"summaries cover ticks up to {tree.last_tick()}, the scenes end at "
                        f"{p.tick()}", _BACK.format(last=p.tick()),
                        lambda: repair(p, p.config()))]
    return []


def _writable(p: Project) -> list[Problem]:
    """A project this process cannot write to is not damaged: it cannot tick (a disk
    mounted read-only, or folders without write permission)."""
    folders = [f for f in (p.root, p.novel_dir, p.scenes_dir) if f.is_dir()]
    locked = [f for f in folders if not os.access(f, os.W_OK)]
    if not locked:
        return []
    where = p.root if p.root in locked else locked[0]
    return [Problem(f"{where} is read-only: nothing can be written (ticks, summaries, fixes)",
                    "make the project writable (e.g. `chmod -R u+w` on it, or mount its disk "
                    "read-write)")]




def _index(p: Project) -> list[Problem]:
    if not p.index_db.is_file():
        return []
    ok = False
    for mode in ("rw", "ro&immutable=1"):   # a read-only project: read it as it is
        try:
            ok = quick_check(f"{p.index_db.as_uri()}?mode={mode}")
            break
        except sqlite3.Error:
            continue
    if ok:
        return []
    return [Problem(".novel/index.db is damaged", "delete it: it is a cache, rebuilt on use",
                    lambda: [Path(f"{p.index_db}{s}").unlink(missing_ok=True)
                             for s in ("", "-wal", "-shm")])]


def _lock(p: Project) -> list[Problem]:
    path = p.novel_dir / "lock"
    if not path.is_file() or not path.read_text().strip():
        return []
    with open(path) as handle:        # flock needs no write access
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return []       # a live process holds it
        fcntl.flock(handle, fcntl.LOCK_UN)
    pid = path.read_text().strip()
    return [Problem(f".novel/lock names process {pid}, which no longer holds it (killed?)",
                    "empty the lock file", lambda: path.write_text(""))]


def _config(p: Project) -> list[Problem]:
    """project.yaml and the preset it names, as `tick` and `run` load them."""
    try:
        p.config(env={})
    except NovelError as exc:
        return [Problem(str(exc), "fix project.yaml (tick, run and status stop on it)")]
    return []


def _prose(p: Project) -> list[Problem]:
    """Committed scenes that hold scaffolding (a "Title:" or "POV:" line, a planner's note,
    a list) or are under half of generation.scene_min_words."""
    try:
        least = p.config(env={}).generation.scene_min_words
    except NovelError:
        least = 0
    problems = []
    for path in scene_files(p.scenes_dir):
        try:
            scene = load_scene(path)
        except (NovelError, OSError):
            continue            # _scenes reports it
        where = f"scenes/{path.name}"
        junk = scaffold_lines(scene.body)
        if junk:
            problems.append(Problem(
                f"{where} holds {len(junk)} line{'s' if len(junk) > 1 else ''} of the prompt's "
                f"scaffolding, not prose (first: {junk[0][:60]!r})",
                "delete those lines by hand (or rewind the tick and write it again)"))
        words = len(scene.body.split())
        if least and words < least / 2:
            problems.append(Problem(
                f"{where} has {words} words, under half of generation.scene_min_words ({least})",
                "write more of it by hand, or rewind the tick and write it again"))
    return problems


CHECKS = (_config, _writable, _journal, _temps, _counter, _scenes, _strays, _plans, _layout, _memory,
          _lore, _summaries, _index, _lock, _prose)


def diagnose(project: Project) -> list[Problem]:
    """Every problem found, in the order of CHECKS."""
    return [problem for check in CHECKS for problem in check(project)]


def fix(project: Project, wait: float = 0.0) -> tuple[list[Problem], list[Problem]]:
    """Apply the safe fixes (under the lock, waited for up to `wait` s); (what was fixed,
    what is still wrong)."""
    fixed = [problem for problem in diagnose(project) if problem.safe]
    project.acquire_lock(wait)
    try:
        for problem in fixed:
            problem.apply()
    finally:
        project.release_lock()
    return fixed, diagnose(project)


def _ranges(ticks: list[int]) -> str:
    out, start = [], ticks[0]
    for a, b in zip(ticks, ticks[1:] + [None]):
        if b != a + 1:
            out.append(str(start) if start == a else f"{start}–{a}")
            start = b
    return ", ".join(out)
