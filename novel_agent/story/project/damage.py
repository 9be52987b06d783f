"""Which files of the book cannot be read as the program reads them, one file at a time.

`damage(root, rel)` says what is wrong with one file (its path relative to the
project folder), "" when it reads well. Each kind of file is read by the loader
the program reads it with, so what is said here is what a tick or a revise
would stop on: a scene that is not UTF-8, whose front matter does not parse or
that holds no prose; a plan record, a memory file, a summary or project.yaml
that does not parse or validate; a lore file the lorebook skips whole. A file
of the book that is empty is damaged too (an emptied character file or
facts.yaml loads as an empty one: memory would lose it without a word), except
a lore file. `sound(rel, data)` asks the same of bytes that are not on the disk
(a version the history keeps), in a folder of its own.

`check_next_tick` and `check_read` stop a tick before it asks a model anything
when the book around it is not whole (a scene missing in the middle, a scene
that cannot be read, a plan or summaries past the last scene): one line naming
the file and `novel doctor --fix`.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

from novel_agent.errors import DamagedBookError, FileFormatError
from novel_agent.files import read_text, read_yaml
from novel_agent.story.lore import read_lore_file
from novel_agent.story.memory.read import check_memory_file
from novel_agent.story.project.folder import Project
from novel_agent.story.scenes import SCENE_RE, Scene, load_scene, scene_ticks
from novel_agent.story.summaries import load_doc

PROJECT_FILE = "project.yaml"


def read_scene(path: Path) -> Scene:
    """A scene as load_scene reads it, one that holds no prose a FileFormatError too (an
    emptied scene loads as a scene of no words)."""
    scene = load_scene(path)
    if not scene.body.strip():
        raise FileFormatError("holds no prose (an emptied scene?)", file=str(path))
    return scene


def _scene(path: Path) -> None:
    read_scene(path)


def _plan(path: Path) -> None:
    if not isinstance(read_yaml(path, None), dict):
        raise FileFormatError("not a plan record (a mapping with the tick's plan and "
                              "extraction)", file=str(path))


def _mapping(path: Path) -> None:
    if not isinstance(read_yaml(path, {}), dict):
        raise FileFormatError("expected a mapping at the top level", file=str(path), line=1)


def _summary(path: Path) -> None:
    load_doc(path)


def _lore(path: Path) -> None:
    skipped = [p for p in read_lore_file(path)[1] if p.endswith("; the file is skipped")]
    if skipped:
        raise FileFormatError(skipped[0])


def _reader(rel: str) -> Callable[[Path], None] | None:
    """The check of the file at `rel`, by where it lives (None: not a file of the book)."""
    folder, _, name = rel.rpartition("/")
    top = folder.split("/", 1)[0]
    if folder == "scenes" and SCENE_RE.match(name):
        return _scene
    if folder == "plans" and name.startswith("plan_") and name.endswith(".yaml"):
        return _plan
    if top == "memory" and name.endswith(".yaml") and not name.startswith("."):
        return _mapping if rel == "memory/clock.yaml" else check_memory_file
    if folder == "summaries" and name.endswith(".md") and not name.startswith("."):
        return _summary
    if folder == "lore" and name.endswith((".yaml", ".yml")) and not name.startswith("."):
        return _lore
    if rel == PROJECT_FILE:
        return _mapping
    return None


def is_book_file(rel: str) -> bool:
    """Whether the file at `rel` is one of the book's (a scene, plan, memory file, summary,
    lore file or project.yaml): what the history's copy can stand in for."""
    return _reader(rel) is not None


def damage(root: Path, rel: str) -> str:
    """What is wrong with the file `rel` of the project at `root` ("" when it reads well,
    is no file of the book, or is not there)."""
    check, path = _reader(rel), Path(root) / rel
    if check is None or not path.is_file():
        return ""
    try:
        if check is not _lore and not read_text(path).strip():
            return f"{rel} is empty"
        check(path)
    except FileFormatError as exc:
        return str(exc)
    except OSError as exc:
        return f"{rel} cannot be read ({exc.strerror})"
    return ""


def sound(rel: str, data: bytes) -> bool:
    """Whether `data` would be a file `rel` that reads well (checked in a folder of its
    own, under the same relative path: a scene's name is its tick, an item's its id)."""
    with tempfile.TemporaryDirectory(prefix="novel-check-") as folder:
        path = Path(folder) / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        return not damage(Path(folder), rel)


DOCTOR = "nothing was written: run `novel doctor --fix`"


def check_next_tick(project: Project, tick: int | None = None) -> None:
    """Stop tick `tick` (default: the one after the last scene) before it costs anything
    when the book around it is not whole: a scene missing before it with later ones there
    (deleted in the middle of the book), or its plan there already (later scenes deleted
    by hand: the commit would refuse it after the model calls were paid). One listing of
    scenes/ (0.9 ms at 1,000 scenes), one stat."""
    ticks = scene_ticks(project.scenes_dir)
    last = ticks[-1] if ticks else 0
    tick = last + 1 if tick is None else tick
    if len(set(ticks) - {0}) != last:
        missing = sorted(set(range(1, last)) - set(ticks))
        what = (f"scenes/scene_{missing[0]:03d}.md is" if len(missing) == 1 else
                f"scenes/scene_{missing[0]:03d}.md and {len(missing) - 1} more are")
        raise DamagedBookError(
            f"tick {tick} cannot start: {what} missing but the scenes go on to tick {last} "
            f"(deleted by hand?); {DOCTOR}, which brings back what the history holds",
            path=str(project.scene_path(missing[0])))
    if project.plan_path(tick).exists():
        raise DamagedBookError(
            f"tick {tick} cannot start: plans/plan_{tick:03d}.yaml is there without its scene "
            f"(scenes deleted by hand?); {DOCTOR}, which brings plans, memory and summaries "
            f"back to tick {tick - 1}", path=str(project.plan_path(tick)))


def check_read(tick: int, unread: dict[str, str], summarized: int) -> None:
    """Stop tick `tick` when a scene could not be read (`unread`: the search index's sync
    names them: index/sync.py) or the summaries reach past the last scene."""
    if unread:
        rel, why = min(unread.items())
        more = f" (and {len(unread) - 1} more scenes)" if len(unread) > 1 else ""
        raise DamagedBookError(f"tick {tick} cannot start: {why}{more}; {DOCTOR}, which brings "
                               "back its last good copy from the history", path=rel)
    if summarized >= tick:
        raise DamagedBookError(
            f"tick {tick} cannot start: the summaries reach tick {summarized}, past the last "
            f"scene (scenes deleted by hand?); {DOCTOR}, which brings them back to tick "
            f"{tick - 1}", path="summaries")
