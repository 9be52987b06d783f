"""Projects as the tests make and compare them: the `project` fixture's story, a fresh one in
another folder, every file of a project with its bytes, settings merged in by hand, and
an author's comments put in a file."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from novel_agent.story.project.folder import Project, create_project

HARBOUR = {"name": "harbour", "premise": "A lighthouse keeper finds a drowned man's map.",
           "genre": "mystery", "protagonist": "Mara Quill", "preset": "balanced"}


def fresh(folder: Path) -> Project:
    """A project like the `project` fixture's (the offline model), in another folder."""
    return create_project(folder / "harbour", HARBOUR, config={"llm": {"provider": "offline"}})


def files_of(root: Path) -> dict[str, bytes]:
    """Every file under root with its bytes, to prove nothing changed. The lock, the
    index (a cache of token counts that a failed tick may still fill) and the usage
    ledger (a failed tick's calls were still made, and are paid for) are left out, and so
    is the history's repository (.novel/history.git: an edit by hand gets an entry there
    when a command opens the project)."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name not in ("lock", "usage.jsonl")
            and not p.name.startswith("index.db")
            and "history.git" not in p.relative_to(root).parts}


def story_files(project: Project) -> dict[str, bytes]:
    """files_of the project's folder."""
    return files_of(project.root)


def set_llm(root: Path, **values) -> None:
    """Merge `values` into the project's llm and generation settings
    (`llm__model="gpt-4o"` sets llm.model)."""
    path = root / "project.yaml"
    data = yaml.safe_load(path.read_text())
    for dotted, value in values.items():
        section, key = dotted.split("__")
        data.setdefault(section, {})[key] = value
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def short_outline(chapters: int = 3, beats: int = 2, scenes: int = 2):
    """An outline of `chapters` chapters (one act each, up to three acts) of `beats` beats
    and `scenes` scenes each, the beats' tensions left to the curve."""
    from novel_agent.story.outline.file import Act, Arc, Beat, Chapter, Outline

    made = [Chapter(n, f"Chapter {n}", f"What chapter {n} does.", scenes,
                    tuple(Beat(f"{n}.{k}", f"Beat {k} of chapter {n} happens.")
                          for k in range(1, beats + 1))) for n in range(1, chapters + 1)]
    acts = min(3, chapters)
    cut = [round(i * chapters / acts) for i in range(acts + 1)]
    return Outline(Arc("Mara follows the map.", "She shuts the door."),
                   tuple(Act(f"Act {i + 1}", f"What act {i + 1} does.",
                             tuple(made[cut[i]:cut[i + 1]])) for i in range(acts)))


def outline_project(project: Project, **sizes) -> Project:
    """`project` with a short_outline(**sizes) saved as its outline."""
    from novel_agent.story.outline.file import save_outline

    save_outline(project.outline_file, short_outline(**sizes))
    return project


def annotate(path: Path) -> list[str]:
    """Put an author's comments in the YAML file at `path`: one at the top, one at the end
    of its first key's line and of its first nested key's, one above its last key, one at
    the end; those comments, in order (what `comments_of` finds while they are kept)."""
    lines = path.read_text().splitlines()
    keys = [i for i, line in enumerate(lines) if line[:1].isalpha()]
    deep = [i for i, line in enumerate(lines) if line.startswith(" ") and ": " in line
            and "#" not in line]
    lines[keys[0]] += "   # mine: its first key"
    if deep:
        lines[deep[0]] += "  # mine: a key within"
    lines.insert(keys[-1], "# mine: above the last key")
    path.write_text("\n".join(["# mine: at the top", *lines, "# mine: at the end"]) + "\n")
    return comments_of(path)


def comments_of(path: Path) -> list[str]:
    """The comments `annotate` put in the file that it still holds, in order."""
    return re.findall(r"# mine: [a-z]+(?: [a-z]+)*", path.read_text())
