"""The one writer of project files: atomic writes, YAML, front matter, transactions.

Every file novel_agent writes goes through `atomic_write` (temp file, fsync,
rename) or a `Transaction` (many files that land together: a journal names them,
and a crash half-way is rolled forward by `recover`). Readers raise
FileFormatError naming the file and line, never a bare YAML traceback.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import yaml

from .errors import FileFormatError

FRONT = "---"
# libyaml's loader when PyYAML was built with it: several times faster on the
# memory files a long story accumulates; the pure-Python one otherwise.
SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _load(text: str) -> Any:
    return yaml.load(text, Loader=SafeLoader)  # noqa: S506 - a safe loader


def atomic_write(path: Path, text: str | bytes) -> None:
    """Write `text` (or bytes) to `path` so a reader sees the old file or the new one,
    never half."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = text.encode("utf-8") if isinstance(text, str) else text
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def dump_yaml(data: Any) -> str:
    """YAML as people like to read it: block style, keys in insertion order, unicode."""
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, default_flow_style=False,
                          width=100)


def _yaml_error(path: Path, exc: yaml.YAMLError) -> FileFormatError:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    return FileFormatError(f"invalid YAML: {problem}", file=str(path),
                           line=mark.line + 1 if mark else None)


def read_yaml(path: Path, default: Any = None) -> Any:
    """Parse a YAML file; a missing file gives `default`, a broken one FileFormatError."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        return default
    try:
        data = _load(text)
    except yaml.YAMLError as exc:
        raise _yaml_error(path, exc) from None
    return default if data is None else data


def yaml_line(path: Path, *keys: str | int) -> int | None:
    """The 1-based line of the node at `keys` (mapping keys, list indices) in a YAML file:
    the deepest that exists, for pointing an error at the right line."""
    try:
        node = yaml.compose(Path(path).read_text(encoding="utf-8"),
                            Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None
    if node is None:
        return None
    line = node.start_mark.line + 1
    for key in keys:
        if isinstance(node, yaml.MappingNode):
            node = next((v for k, v in node.value if k.value == str(key)), None)
        elif isinstance(node, yaml.SequenceNode) and isinstance(key, int):
            node = node.value[key] if 0 <= key < len(node.value) else None
        else:
            node = None
        if node is None:
            break
        line = node.start_mark.line + 1
    return line


def write_yaml(path: Path, data: Any) -> None:
    """Atomically write `data` as YAML."""
    atomic_write(path, dump_yaml(data))


def render_front_matter(meta: dict[str, Any], body: str) -> str:
    """A markdown document with YAML front matter."""
    return f"{FRONT}\n{dump_yaml(meta)}{FRONT}\n\n{body.strip()}\n"


def parse_front_matter(text: str, *, path: Path | str = "<text>") -> tuple[dict[str, Any], str]:
    """Split a document into (front matter, body). No front matter gives ({}, text)."""
    if not text.startswith(FRONT + "\n") and not text.startswith(FRONT + "\r\n"):
        return {}, text.strip()
    lines = text.splitlines()
    for index in range(1, len(lines)):
        if lines[index].strip() == FRONT:
            head = "\n".join(lines[1:index])
            body = "\n".join(lines[index + 1:])
            break
    else:
        raise FileFormatError("front matter opened with '---' is never closed", file=str(path),
                              line=1)
    try:
        meta = _load(head) or {}
    except yaml.YAMLError as exc:
        err = _yaml_error(Path(str(path)), exc)
        if err.line:
            err = FileFormatError(str(exc.problem if hasattr(exc, "problem") else exc),
                                  file=str(path), line=err.line + 1)
        raise err from None
    if not isinstance(meta, dict):
        raise FileFormatError("front matter must be a mapping", file=str(path), line=2)
    return meta, body.strip()


def read_front_matter(path: Path) -> tuple[dict[str, Any], str]:
    """Read a markdown file with front matter."""
    return parse_front_matter(Path(path).read_text(encoding="utf-8"), path=path)


class Transaction:
    """Files that must land together (a tick's commit).

    `stage()` collects (path, text); `commit()` writes every text to a staging
    file, then a journal listing them, then renames each into place, then
    removes the journal. A crash before the journal leaves the project as it
    was; a crash after it is finished by `recover()` at the next open.
    """

    def __init__(self, root: Path, work_dir: Path):
        self.root = Path(root)
        self.work_dir = Path(work_dir)
        self.files: dict[Path, str] = {}

    def stage(self, path: Path, text: str) -> None:
        """Add a file to the transaction (a later stage of the same path wins)."""
        self.files[Path(path)] = text

    def stage_yaml(self, path: Path, data: Any) -> None:
        """Add a YAML file to the transaction."""
        self.stage(path, dump_yaml(data))

    def commit(self) -> None:
        """Land every staged file, all or nothing."""
        if not self.files:
            return
        self.work_dir.mkdir(parents=True, exist_ok=True)
        entries = []
        for number, (target, text) in enumerate(self.files.items()):
            staged = self.work_dir / f"{number:04d}.staged"
            atomic_write(staged, text)
            entries.append({"staged": staged.name, "target": str(target.relative_to(self.root))})
        atomic_write(self.work_dir / "journal.json", json.dumps(entries, indent=1))
        recover(self.root, self.work_dir)


def recover(root: Path, work_dir: Path) -> bool:
    """Finish a transaction whose journal was written; drop one that never got that far.

    Returns True when a journal was rolled forward.
    """
    work_dir = Path(work_dir)
    journal = work_dir / "journal.json"
    if not work_dir.is_dir():
        return False
    rolled = False
    if journal.is_file():
        entries = json.loads(journal.read_text(encoding="utf-8"))
        for entry in entries:
            staged = work_dir / entry["staged"]
            target = Path(root) / entry["target"]
            if staged.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                os.replace(staged, target)
                _fsync_dir(target.parent)
        journal.unlink()
        rolled = True
    for leftover in work_dir.glob("*.staged"):
        leftover.unlink()
    return rolled
