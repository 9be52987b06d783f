"""What a project holds, at a glance: counts for `novel status` and `novel inspect`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .memory import load_memory
from .project import Project
from .scenes import Scene, load_scene, scene_ticks
from .files import read_front_matter


@dataclass(frozen=True)
class ProjectStatus:
    """Numbers that describe a project."""

    name: str
    root: Path
    tick: int
    scenes: int
    words: int
    characters: int
    locations: int
    open_loops: int
    resolved_loops: int
    facts: int
    last_scene: Scene | None


def scene_words(path: Path) -> int:
    """Words of a scene, from its front matter when present (cheap), else its body."""
    meta, body = read_front_matter(path)
    words = meta.get("words")
    return int(words) if isinstance(words, int) else len(body.split())


def project_status(project: Project) -> ProjectStatus:
    """Count what the project's files hold."""
    ticks = scene_ticks(project.scenes_dir)
    memory = load_memory(project.memory_dir)
    words = sum(scene_words(project.scene_path(t)) for t in ticks)
    last = load_scene(project.scene_path(ticks[-1])) if ticks else None
    return ProjectStatus(
        name=project.name, root=project.root, tick=project.tick(), scenes=len(ticks),
        words=words, characters=len(memory.characters), locations=len(memory.locations),
        open_loops=len(memory.open_loops()),
        resolved_loops=sum(1 for l in memory.loops if l.get("status") == "resolved"),
        facts=len(memory.facts), last_scene=last)


def folder_tree(root: Path, *, max_files: int = 3) -> list[str]:
    """The project folder as a short tree: each folder with its file count, a few names."""
    lines = [f"{root.name}/"]

    def walk(folder: Path, depth: int) -> None:
        entries = sorted(folder.iterdir(), key=lambda p: (p.is_file(), p.name))
        dirs = [p for p in entries if p.is_dir() and p.name not in ("txn", "__pycache__")]
        files = [p for p in entries if p.is_file() and not p.name.startswith(".")]
        pad = "  " * depth
        for d in dirs:
            count = sum(1 for p in d.rglob("*") if p.is_file() and not p.name.startswith("."))
            lines.append(f"{pad}{d.name}/  ({count} file{'s' if count != 1 else ''})")
            if depth < 2:
                walk(d, depth + 1)
        for f in files[:max_files]:
            lines.append(f"{pad}{f.name}  {_size(f.stat().st_size)}")
        if len(files) > max_files:
            lines.append(f"{pad}… {len(files) - max_files} more")

    walk(root, 1)
    return lines


def _size(n: int) -> str:
    return f"{n} B" if n < 1024 else f"{n / 1024:.1f} KB"
