"""The one writer of project files: atomic writes, YAML, front matter, transactions.

Every file novel_agent writes goes through `atomic_write` (temp file, fsync,
rename) or a `Transaction` (many files that land together: a journal names them,
and a crash half-way is rolled forward by `recover`). Readers raise
FileFormatError naming the file and line, never a bare YAML traceback.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any, Callable

import yaml

from . import crashpoints
from .errors import FileFormatError, OverwriteError

FRONT = "---"
# libyaml's loader when PyYAML was built with it: several times faster on the
# memory files a long story accumulates; the pure-Python one otherwise.
SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _load(text: str) -> Any:
    return yaml.load(text, Loader=SafeLoader)  # noqa: S506 - a safe loader


TEMP_RE = re.compile(r"^\..+\.tmp$")   # what atomic_write leaves when killed mid-write
_umask: list[int] = []


def file_mode() -> int:
    """The mode a new file gets under this process's umask (0666 & ~umask), read once."""
    if not _umask:
        current = os.umask(0o022)
        os.umask(current)
        _umask.append(current)
    return 0o666 & ~_umask[0]


def atomic_write(path: Path, text: str | bytes) -> None:
    """Write `text` (or bytes) to `path` so a reader sees the old file or the new one,
    never half. The file's mode follows the umask (mkstemp alone would make it 0600)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = text.encode("utf-8") if isinstance(text, str) else text
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, file_mode())
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


def read_text(path: Path) -> str:
    """A project text file as str; one that is not UTF-8 is a FileFormatError saying where."""
    data = Path(path).read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise FileFormatError(f"not UTF-8 text (byte 0x{data[exc.start]:02x}): re-save the file "
                              "as UTF-8", file=str(path), line=line) from None


def read_yaml(path: Path, default: Any = None) -> Any:
    """Parse a YAML file; a missing file gives `default`, a broken one FileFormatError."""
    try:
        text = read_text(path)
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
    return parse_front_matter(read_text(path), path=path)


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
        self.new: set[Path] = set()

    def stage(self, path: Path, text: str, *, new: bool = False) -> None:
        """Add a file to the transaction (a later stage of the same path wins). `new`: the
        file must not exist yet; the commit stops, naming it, rather than replace it."""
        self.files[Path(path)] = text
        if new:
            self.new.add(Path(path))

    def stage_yaml(self, path: Path, data: Any) -> None:
        """Add a YAML file to the transaction."""
        self.stage(path, dump_yaml(data))

    def commit(self) -> None:
        """Land every staged file, all or nothing."""
        if not self.files:
            return
        for path in [p for p in self.files if p in self.new]:
            if path.exists():
                raise OverwriteError(f"{path.relative_to(self.root)} exists and this commit "
                                     "did not write it: nothing was changed; move the file "
                                     "away (or run `novel doctor`)", path=str(path))
        self.work_dir.mkdir(parents=True, exist_ok=True)
        entries = []
        for number, (target, text) in enumerate(self.files.items()):
            staged = self.work_dir / f"{number:04d}.staged"
            atomic_write(staged, text)
            entries.append({"staged": staged.name, "target": str(target.relative_to(self.root))})
        crashpoints.hit("before_journal")
        atomic_write(self.work_dir / "journal.json", json.dumps(entries, indent=1))
        recover(self.root, self.work_dir, midway=lambda: crashpoints.hit("mid_commit"))


def journal_targets(work_dir: Path) -> list[str]:
    """The files an unfinished journal in `work_dir` will land (relative paths)."""
    try:
        entries = json.loads((Path(work_dir) / "journal.json").read_text(encoding="utf-8"))
        return [str(e["target"]) for e in entries]
    except (OSError, ValueError, TypeError, KeyError):
        return []


def temp_files(root: Path, folders: list[Path]) -> list[Path]:
    """Temp files a killed `atomic_write` left in `folders` (and the journal's staging)."""
    found = []
    for folder in folders:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        found += [Path(e.path) for e in entries if TEMP_RE.match(e.name) and e.is_file()]
    return sorted(found)


def recover(root: Path, work_dir: Path, midway: Callable[[], None] | None = None) -> bool:
    """Finish a transaction whose journal was written; drop one that never got that far.

    Returns True when a journal was rolled forward.
    """
    work_dir = Path(work_dir)
    journal = work_dir / "journal.json"
    if not work_dir.is_dir():
        return False
    rolled = False
    if journal.is_file():
        try:
            entries = json.loads(journal.read_text(encoding="utf-8"))
        except ValueError:
            raise FileFormatError("an unreadable commit journal (hand-edited?): move it away "
                                  "to drop the interrupted commit", file=str(journal)) from None
        for entry in entries:
            staged = work_dir / entry["staged"]
            target = Path(root) / entry["target"]
            if staged.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                os.replace(staged, target)
                _fsync_dir(target.parent)
                if midway is not None:
                    midway()
                    midway = None
        journal.unlink()
        rolled = True
    for leftover in [*work_dir.glob("*.staged"), *temp_files(root, [work_dir])]:
        leftover.unlink(missing_ok=True)
    return rolled
