"""What the pages write: the author's note and lore entries.

Each edit's text gets Unix line endings (`form_text`) and is checked whole before
any file is touched (a lore entry exactly as `novel lore add` checks it, through
lore.py), then written atomically; a bad one raises the library's error, naming
the file or field, and leaves every file as it was.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from novel_agent.errors import FileFormatError
from novel_agent.files import atomic_write, dump_yaml, write_yaml
from novel_agent.story.lore import check_entry, entry_yaml, new_entry_path, parse_lore
from novel_agent.story.project.folder import Project
from novel_agent.story.steer import KEYS


def form_text(text: str) -> str:
    """A form field's text with Unix line endings: a browser sends a textarea's lines as
    CRLF (the HTML standard says so), which the files never hold."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _whole_number(name: str, value: str, path: Path) -> int | None:
    value = value.strip()
    if not value:
        return None
    if not value.isdigit() or int(value) < 1:
        raise FileFormatError(f"'{name}' must be a whole number of at least 1, not {value!r}",
                              file=str(path))
    return int(value)


def steer_text(text: str, until: str = "", ticks: str = "", *, path: Path) -> str:
    """steer.md's text for a note and its expiry (`until`, `ticks`: digits or empty)."""
    limits = {k: v for k, v in zip(KEYS, (_whole_number("until", until, path),
                                          _whole_number("ticks", ticks, path))) if v}
    body = form_text(text).strip()
    head = f"---\n{dump_yaml(limits)}---\n\n" if limits else ""
    return f"{head}{body}\n" if body else head


def save_steer(project: Project, text: str, until: str = "", ticks: str = "") -> None:
    """Write the author's note (an empty text with no limits empties it); the next tick
    reads it. `until`/`ticks` are checked before the file is touched."""
    atomic_write(project.steer_file, steer_text(text, until, ticks, path=project.steer_file))


def add_lore(project: Project, name: str, keys: Iterable[str], content: str, *,
             priority: str = "0", always: bool = False, regex: bool = False,
             case_sensitive: bool = False) -> Path:
    """A new entry in lore/, checked as `novel lore add` checks it; returns its file."""
    name, content = form_text(name).strip(), form_text(content)
    if not name:
        raise FileFormatError("a lore entry needs a name", file=str(project.lore_dir))
    try:
        rank = int(priority.strip() or "0")
    except ValueError:
        raise FileFormatError(f"'priority' must be a whole number, not {priority!r}",
                              file=str(project.lore_dir)) from None
    data = entry_yaml(name, [k.strip() for k in keys if k.strip()], content, priority=rank,
                      always=always, regex=regex, case_sensitive=case_sensitive)
    path = new_entry_path(project.lore_dir, name)
    check_entry(data, key=path.stem, source=str(path), line=1)
    project.lore_dir.mkdir(parents=True, exist_ok=True)
    write_yaml(path, data)
    return path


def edit_lore(project: Project, file_name: str, text: str) -> Path:
    """Replace lore/FILE_NAME (an existing lore file) with `text`, if every entry in it
    is valid; else FileFormatError with each problem, and the file stays."""
    path = next((p for p in sorted(project.lore_dir.glob("*.y*ml")) if p.name == file_name),
                None)
    if path is None:
        raise FileFormatError(f"no lore file '{file_name}' to edit",
                              file=str(project.lore_dir))
    text = form_text(text)
    entries, problems = parse_lore(text, path)
    if problems:
        raise FileFormatError("; ".join(p.removesuffix("; the entry is skipped")
                                        .removesuffix("; the file is skipped") for p in problems))
    if not entries:
        raise FileFormatError("no entry left: a lore file needs at least one", file=str(path))
    atomic_write(path, text)
    return path
