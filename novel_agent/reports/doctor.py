"""`novel doctor`: check a project against its own rules, and say how to fix each problem.

`diagnose(project)` lists Problems (what is wrong, the fix in words, and for the
safe ones a function that applies it): an unfinished commit journal, temp files
of killed writes, the tick counter against the scenes, duplicate ticks, front
matter against file names, files in scenes/ that are no scene (a chapter1.md of
the writer's own), plans without scenes, memory in the old layout
(memory/loops.yaml, relationships.yaml), summaries beyond the last scene, lore
files and entries the loader skips, the index's health (a read-only one is read
as it is, not called damaged), a project that cannot be written, a stale lock,
a project.yaml that does not load (the error with its line), and committed
scenes that hold the prompt's scaffolding or are under half of
generation.scene_min_words. Every file of the book is read on its own
(story/project/damage.py): each scene, plan, memory file, summary and lore file that
cannot be read is listed, as is each one missing (a scene in the middle of the
book, the plan of a scene there, a summary an arc covers, memory/facts.yaml,
project.yaml: find_for_doctor finds the folder by its history when it is gone).
Such a file's fix is its last good copy from the history (history.mend), the
entry named; what the history cannot give back is said. `fix(project)` applies
the safe fixes and checks again. Reads everything, changes nothing unless asked.

Every link in the project is named (story/project/links.py): one that leads out
of it is a problem, nothing reading through it (files.py), fixed first: a file
of the book a link replaced comes back from the history, any other link is
removed (what it points to is left alone, never read); one that stays inside is
a note. steer.md, style.yaml and the outline are read as a tick reads them (a
steer.md that is not UTF-8 stops `novel tick`), and a scene that has lost its
front matter (no title, no POV) gets it back from the history, its prose kept.
A note (a link inside the project, a stale lock) is said, not counted: notes
alone leave doctor's exit code 0.
"""

from __future__ import annotations

import fcntl
import os
import re
import sqlite3
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from novel_agent.errors import NovelError, ProjectError
from novel_agent.files import (
    outside_link,
    parse_front_matter,
    render_front_matter,
    temp_files,
)
from novel_agent.history.git import GIT_DIR
from novel_agent.history.mend import Copy, bring_back, last_good
from novel_agent.history.store import History
from novel_agent.index.db import quick_check, search_damage
from novel_agent.revision.repair import repair
from novel_agent.story.lore import load_lorebook, lore_files
from novel_agent.story.memory.read import FOLDERS, LEGACY, LIST_KEYS
from novel_agent.story.outline.file import load_outline, outline_path
from novel_agent.story.project.damage import damage, is_book_file, sound
from novel_agent.story.project.folder import (
    PROJECT_FILE,
    Project,
    find_project,
    journal_tick,
    projects_dir,
)
from novel_agent.story.project.links import project_links
from novel_agent.story.project.recovery import migrate_memory, rebuild_state, temp_folders
from novel_agent.story.project.state import state_in
from novel_agent.story.scenes import SCENE_RE, load_scene, scene_files, scene_ticks
from novel_agent.story.steer import read_steer
from novel_agent.story.style import STYLE_FILE, read_style
from novel_agent.story.summaries import DOC_RE, load_doc, load_tree
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
    copy: Copy | None = None        # a file's last good copy, brought back from the history
    note: bool = False              # worth saying, not wrong: doctor's exit code stays 0

    @property
    def safe(self) -> bool:
        return self.apply is not None or self.copy is not None

    @property
    def done(self) -> str:
        """What applying the fix did, in words."""
        return f"brought back from the history, {self.copy.source()}" if self.copy else self.fix


def _from_history(p: Project, rel: str, what: str, otherwise: str, *,
                  damaged: bool) -> Problem:
    """File `rel`, damaged or (`damaged` False) gone, and its fix: its last good copy in the
    history, the entry named; without one, `otherwise`, saying why."""
    history = History(p)
    if not history.available:
        return Problem(what, "the history is off (git is not on PATH) and cannot bring it "
                       f"back: {otherwise}")
    copy = last_good(history, rel, sound)
    if copy is None:
        return Problem(what, f"the history holds no good copy of it: {otherwise}")
    kept = " (this one stays in the history)" if damaged else ""
    return Problem(what, f"bring back its last good copy from the history, {copy.source()}"
                   f"{kept}", copy=copy)


def _damaged(p: Project, rel: str, otherwise: str) -> list[Problem]:
    """The problem of file `rel`, if it cannot be read (a link out of the project: _links
    says so)."""
    if outside_link(p.root / rel):
        return []
    what = damage(p.root, rel)
    return [_from_history(p, rel, what, otherwise, damaged=True)] if what else []


def _missing(p: Project, rel: str, what: str, otherwise: str) -> Problem:
    return _from_history(p, rel, what, otherwise, damaged=False)


def _journal(p: Project) -> list[Problem]:
    if not (p.novel_dir / "txn" / "journal.json").is_file():
        return []
    tick = journal_tick(p.novel_dir)
    return [Problem(f"an interrupted commit{f' of tick {tick}' if tick else ''} is unfinished",
                    "finish it (any command that opens the project does)", p.recover)]


def _temps(p: Project) -> list[Problem]:
    found = temp_files(p.root, temp_folders(p))
    return [Problem(f"{f.relative_to(p.root)}: a temp file of a killed write",
                    "delete it", partial(f.unlink, missing_ok=True)) for f in found]


def _counter(p: Project) -> list[Problem]:
    try:
        said = p.state().get("tick") if p.state_file.is_file() else None
    except NovelError as exc:
        return [_state_back(p, str(exc))]
    if said == p.tick():
        return []
    return [Problem(f".novel/state.yaml says tick {said}, the scenes end at tick {p.tick()}",
                    "set the counter from the scenes", lambda: p.update_state(tick=p.tick()))]


STATE_REL = ".novel/state.yaml"


def _state_back(p: Project, what: str) -> Problem:
    """A state.yaml that cannot be read (`what` says why), and its fix: the history's copy
    when the newest version there that reads well matches the book (its counter the
    scenes': the writer's tier bounds and the recall history come back with it), else a
    rebuild from the scenes, saying why the history's would not do."""
    history, tick = History(p), p.tick()
    copy = last_good(history, STATE_REL, lambda _, data: state_in(data) is not None) \
        if history.available else None
    said = (state_in(copy.text.encode("utf-8")) or {}).get("tick") if copy else None
    if copy is not None and said == tick:
        return Problem(what, f"bring back its copy from the history, {copy.source()} (the "
                       "counter, the writer's tiers and the recall history as that tick left "
                       "them)", copy=copy)
    why = ("the history is off (git is not on PATH)" if not history.available else
           "the history holds no copy of it that reads" if copy is None else
           f"the history's last copy says tick {said}, the scenes end at tick {tick}")
    return Problem(what, f"rebuild state.yaml from the scenes ({why}): the counter follows "
                   "the scenes, the writer's tiers and the recall history start again",
                   partial(rebuild_state, p))


def _scenes(p: Project) -> list[Problem]:
    """Duplicate ticks, scenes missing in the middle of the book (each brought back from the
    history; those it has no copy of, in one line), every scene that cannot be read."""
    problems, ticks = [], scene_ticks(p.scenes_dir)
    for tick in sorted({t for t in ticks if ticks.count(t) > 1}):
        problems.append(Problem(f"tick {tick} has more than one scene file",
                                "keep one: rename or move the others away"))
    last = ticks[-1] if ticks else 0
    lost = []
    for tick in sorted(set(range(1, last)) - set(ticks)):
        rel = f"scenes/scene_{tick:03d}.md"
        found = _missing(p, rel, f"{rel} is missing (the scenes go on to tick {last})", "")
        if found.safe:
            problems.append(found)
        else:
            lost.append(tick)
    if lost:
        why = ("the history is off (git is not on PATH)" if not History(p).available
               else "the history holds none of them")
        problems.append(Problem(f"scenes missing for ticks {_ranges(lost)}",
                                f"{why}: restore them from a copy of your own, or renumber "
                                "the scenes after them"))
    for path in scene_files(p.scenes_dir):
        problems += _damaged(p, f"scenes/{path.name}", "fix the file by hand")
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
    """Plans after the last scene (scenes deleted by hand: the repair), plans that cannot be
    read, and the plans of scenes there that are missing (revise replays each record)."""
    last = p.tick()
    names = os.listdir(p.plans_dir) if p.plans_dir.is_dir() else []
    ticks = sorted(int(m.group(1)) for n in names if (m := PLAN_RE.match(n)))
    problems = [Problem(f"plans/plan_{t:03d}.yaml has no scene after it (the last is tick "
                        f"{last}): the next tick would stop there", _BACK.format(last=last),
                        lambda: repair(p, p.config()))
                for t in ticks if t > last]
    for name in sorted(n for n in names if PLAN_RE.match(n)):
        problems += _damaged(p, f"plans/{name}", "fix it by hand (`novel revise` reads it)")
    have = set(ticks)
    for tick in sorted(set(scene_ticks(p.scenes_dir)) - have):
        rel = f"plans/plan_{tick:03d}.yaml"
        problems.append(_missing(p, rel, f"{rel} is missing (scene {tick} is there)",
                                 "`novel revise` of a scene before it will stop there"))
    return problems


def _layout(p: Project) -> list[Problem]:
    old = [kind for kind in LEGACY if (p.memory_dir / f"{kind}.yaml").is_file()]
    return [Problem(f"memory/{kind}.yaml is in the old layout (one file for all {kind})",
                    f"move each to its own file under memory/{kind}/ (any command that opens "
                    "the project does)", lambda: migrate_memory(p)) for kind in old]


def _memory(p: Project) -> list[Problem]:
    """Every memory file that cannot be read (each on its own: not only the first), and a
    missing facts.yaml (a project always has one)."""
    memory, problems = p.memory_dir, []
    rels = [f"memory/{kind}/{name}" for kind in FOLDERS
            for name in sorted(os.listdir(memory / kind) if (memory / kind).is_dir() else [])
            if name.endswith(".yaml") and not name.startswith(".")]
    rels += [f"memory/{name}" for name in (*LIST_KEYS, "clock.yaml") if (memory / name).is_file()]
    for rel in rels:
        hint = " (the file name is the id)" if rel.count("/") == 2 else ""
        problems += _damaged(p, rel, f"fix the file by hand{hint}")
    if memory.is_dir() and not (memory / "facts.yaml").is_file():
        problems.append(_missing(p, "memory/facts.yaml", "memory/facts.yaml is missing: the "
                                 "story's facts are gone", "write `facts: []` in it to start "
                                 "the facts again"))
    return problems


def _lore(p: Project) -> list[Problem]:
    """Lore files and entries the loader skips (each problem names its file and line); a
    file skipped whole comes back from the history when it holds a good copy."""
    by_hand = "fix the file (`novel lore check` shows what is read)"
    whole: dict[str, Problem] = {}
    for path in lore_files(p.lore_dir):
        found = _damaged(p, f"lore/{path.name}", by_hand)
        if found and found[0].safe:
            whole[found[0].what] = found[0]
    return [whole.get(problem) or Problem(problem, by_hand)
            for problem in load_lorebook(p.lore_dir).problems]


def _summaries(p: Project) -> list[Problem]:
    """Summary files that cannot be read, those an arc covers that are gone, then the tree
    itself (overlaps, cycles) and summaries past the last scene."""
    names = sorted(n for n in (os.listdir(p.summaries_dir) if p.summaries_dir.is_dir() else [])
                   if n.endswith(".md") and not n.startswith("."))
    problems = []
    for name in names:
        problems += _damaged(p, f"summaries/{name}",
                             "fix the file, or remove it and run `novel summarize`")
    for name in names:
        if DOC_RE.match(name) and name.startswith("arc_") and not damage(p.root, f"summaries/{name}"):
            for covered in load_doc(p.summaries_dir / name).covers:
                if f"{covered}.md" not in names:
                    rel = f"summaries/{covered}.md"
                    problems.append(_missing(p, rel, f"{rel} is missing ({name} covers it)",
                                             f"remove {name} and run `novel summarize`"))
    if problems:
        return problems
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

    def delete() -> None:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{p.index_db}{suffix}").unlink(missing_ok=True)

    return [Problem(".novel/index.db is damaged", "delete it: it is a cache, rebuilt on use",
                    delete)]


def _search_index(p: Project) -> list[Problem]:
    """Damage quick_check does not see (_index): blocks of the search table garbled inside
    sound pages, which a query meets ("database disk image is malformed"; a tick then
    rebuilds the index and runs again). Asked only of an index that can be written."""
    if not p.index_db.is_file() or _index(p):
        return []
    found = search_damage(f"{p.index_db.as_uri()}?mode=rw")
    if not found:
        return []
    return [Problem(f".novel/index.db: its search table is damaged ({found})",
                    "delete it: it is a cache, rebuilt from the files on use",
                    partial(_delete_index, p))]


def _delete_index(p: Project) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{p.index_db}{suffix}").unlink(missing_ok=True)


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
                    "the next command takes the lock over (--fix empties the file)",
                    lambda: path.write_text(""), note=True)]


def _project_file(p: Project) -> list[Problem]:
    """A project.yaml deleted (the folder found by its history: find_for_doctor)."""
    if p.project_file.is_file():
        return []
    return [_missing(p, PROJECT_FILE, f"{PROJECT_FILE} is missing: the story bible and the "
                     "project's settings are gone", f"write {PROJECT_FILE} again (name, "
                     "premise, preset)")]


def _config(p: Project) -> list[Problem]:
    """project.yaml and the preset it names, as `tick` and `run` load them; a project.yaml
    that does not parse comes back from the history when it holds a good copy."""
    if not p.project_file.is_file():
        return []           # _project_file reports it
    by_hand = "fix project.yaml (tick, run and status stop on it)"
    broken = _damaged(p, "project.yaml", by_hand)
    if broken:
        return broken
    try:
        p.config(env={})
    except NovelError as exc:
        return [Problem(str(exc), by_hand)]
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
        if not scene.body.strip():
            continue            # _scenes reports it
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


def _links(p: Project) -> list[Problem]:
    """Every link in the project: one that leads out (nothing reads through it) brought
    back from the history when a file of the book was linked over, else removed (what
    it points to is left alone); one that stays inside, a note."""
    problems = []
    for link in project_links(p.root):
        if not link.out:
            problems.append(Problem(f"{link.rel} is a link to {link.target!r}, inside the "
                                    "project", "nothing to do: it is read as what it names",
                                    note=True))
            continue
        what = (f"{link.rel} is a link to {link.target!r}, outside the project: nothing is "
                "read through it")
        remove = "remove the link (what it names is left alone; copy it in if it is yours)"
        found = (_from_history(p, link.rel, what, remove, damaged=True)
                 if is_book_file(link.rel) else None)
        problems.append(found if found is not None and found.safe else
                        Problem(what, found.fix if found else remove,
                                partial((p.root / link.rel).unlink, missing_ok=True)))
    return problems


def _inputs(p: Project) -> list[Problem]:
    """steer.md, style.yaml and the outline, read as a tick reads them (one it stops on,
    named with its line; a link out of the project: _links says so)."""
    readers: tuple[tuple[Path, Callable[[], object]], ...] = (
        (p.steer_file, lambda: read_steer(p.steer_file)),
        (p.root / STYLE_FILE, lambda: read_style(p.root)),
        (outline_path(p.root), lambda: load_outline(outline_path(p.root))))
    problems = []
    for path, read in readers:
        if not path.is_file() or outside_link(path):
            continue
        try:
            read()
        except NovelError as exc:
            problems.append(Problem(str(exc), f"fix {path.relative_to(p.root)} (re-save it as "
                                    "UTF-8 if it is not): `novel tick` stops on it"))
    return problems


def _front_matter(p: Project) -> list[Problem]:
    """Scenes that read but have lost their front matter (no title, no POV): the last one
    the history holds put back, the prose kept as it is now."""
    problems = []
    for path in scene_files(p.scenes_dir):
        if outside_link(path):
            continue
        try:
            scene = load_scene(path)
        except (NovelError, OSError):
            continue            # _scenes reports it
        if scene.title or scene.pov or not scene.body.strip():
            continue
        rel = f"scenes/{path.name}"
        problems.append(_front_from_history(p, rel, scene.body, (
            f"{rel} has lost its front matter (no title, no POV): the prompts, the index and "
            "the export name it by neither")))
    return problems


def _front_from_history(p: Project, rel: str, body: str, what: str) -> Problem:
    by_hand = ("put it back by hand: `---`, `title: …`, `pov: …`, `---` above the prose")
    history = History(p)
    copy = last_good(history, rel, _titled) if history.available else None
    if copy is None:
        return Problem(what, by_hand)
    meta = parse_front_matter(copy.text, path=rel)[0]
    return Problem(what, f"put back its front matter from the history, {copy.source()}, the "
                   "prose kept as it is", copy=Copy(rel, copy.entry,
                                                    render_front_matter(meta, body)))


def _titled(rel: str, data: bytes) -> bool:
    """A version of scene `rel` that reads well and has a title or a POV."""
    if not sound(rel, data):
        return False
    meta = parse_front_matter(data.decode("utf-8"), path=rel)[0]
    return bool(meta.get("title") or meta.get("pov"))


CHECKS = (_project_file, _config, _writable, _journal, _temps, _links, _counter, _scenes,
          _strays, _plans, _layout, _memory, _lore, _summaries, _index, _search_index, _lock,
          _prose, _inputs, _front_matter)


# fixed before the rest is looked at: a journal lands files; a link out of the project
# brought back or removed changes which scenes there are
FIRST = (_journal, _temps, _links)


def find_for_doctor(spec: str | None, cwd: Path, env: Mapping[str, str]) -> Project:
    """The project `-p` names (story/project/folder.find_project), or a folder it names (or the
    one the command runs in) whose project.yaml is gone but whose history is there: the
    doctor can bring it back."""
    try:
        return find_project(spec, cwd, env)
    except ProjectError:
        folders = ([Path(spec).expanduser(), Path(cwd) / spec, projects_dir(cwd, env) / spec]
                   if spec else [Path(cwd), *Path(cwd).parents])
        for folder in folders:
            if (folder / ".novel" / GIT_DIR / "HEAD").is_file():
                return Project(folder)
        raise


def diagnose(project: Project) -> list[Problem]:
    """Every problem found, in the order of CHECKS."""
    return [problem for check in CHECKS for problem in check(project)]


def fix(project: Project, wait: float = 0.0) -> tuple[list[Problem], list[Problem]]:
    """Apply the safe fixes (under the lock, waited for up to `wait` s): an interrupted
    commit and temp files first, then the files brought back from the history, in one
    transaction, then the rest; (what was fixed, what is still wrong)."""
    project.acquire_lock(wait)
    try:
        fixed = _apply(project, [p for check in FIRST for p in check(project) if p.safe])
        fixed += _apply(project, [p for p in diagnose(project) if p.safe])
    finally:
        project.release_lock()
    return fixed, diagnose(project)


def _apply(project: Project, problems: list[Problem]) -> list[Problem]:
    bring_back(project, [p.copy for p in problems if p.copy is not None])
    for problem in problems:
        if problem.copy is None and problem.apply is not None:
            problem.apply()
    return problems


def _ranges(ticks: list[int]) -> str:
    out, start = [], ticks[0]
    for a, b in zip(ticks, [*ticks[1:], ticks[-1] + 2]):     # (past the last: ends its range)
        if b != a + 1:
            out.append(str(start) if start == a else f"{start}–{a}")
            start = b
    return ", ".join(out)
