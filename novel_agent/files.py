"""The one writer of project files: atomic writes, YAML, front matter.

Every file novel_agent writes goes through `atomic_write` (temp file, fsync,
rename) or a `journal.Transaction` (many files that land together). Readers
raise FileFormatError naming the file and line, never a bare YAML traceback.
"""

from __future__ import annotations

import os
import re
import secrets
from pathlib import Path
from typing import Any

import yaml

from novel_agent.errors import FileFormatError

FRONT = "---"
# libyaml's loader when PyYAML was built with it: several times faster on the
# memory files a long story accumulates; the pure-Python one otherwise.
SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _load(text: str) -> Any:
    return yaml.load(text, Loader=SafeLoader)  # noqa: S506 - a safe loader


TEMP_RE = re.compile(r"^\..+\.tmp$")   # what atomic_write leaves when killed mid-write


def new_temp(path: Path) -> tuple[int, Path]:
    """A new, empty temp file beside `path` (`.<name>.<random>.tmp`), open for writing.
    Created with mode 0666 so the kernel applies the umask of the moment (mkstemp would
    make it 0600 whatever the umask)."""
    while True:
        tmp = path.parent / f".{path.name}.{secrets.token_hex(4)}.tmp"
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666), tmp
        except FileExistsError:
            continue


def write_synced(fd: int, data: bytes) -> None:
    """Write all of `data` to the open file `fd`, flush it to the disk, and close it."""
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write(path: Path, text: str | bytes) -> None:
    """Write `text` (or bytes) to `path` so a reader sees the old file or the new one,
    never half. A new file's mode follows the umask."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = text.encode("utf-8") if isinstance(text, str) else text
    fd, tmp = new_temp(path)
    try:
        write_synced(fd, data)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)


def fsync_dir(directory: Path) -> None:
    """Make the directory's entries (a rename, a new or removed file) durable."""
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


def dump_yaml(data: Any, width: float = 100) -> str:
    """YAML as people like to read it: block style, keys in insertion order, unicode, lines
    folded past `width` (math.inf: never)."""
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, default_flow_style=False,
                          width=width)


_OPENERS = {"flow mapping": ("{", "}"), "flow sequence": ("[", "]")}


def yaml_problem(exc: yaml.YAMLError) -> tuple[str, int | None]:
    """What a YAML error means, in words with what to do, and the line to look at: for a
    bracket or brace never closed, the line where it opened (PyYAML's problem mark is
    where it gave up, a line or more later).

    >>> yaml_problem(_parse_error("a: 1\\nb: [1, 2\\nc: 3\\n"))[1]
    2
    """
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    context = str(getattr(exc, "context", "") or "")
    opened = getattr(exc, "context_mark", None)
    for kind, (start, end) in _OPENERS.items():
        if kind in context and opened is not None:
            return (f"invalid YAML: the '{start}' opened here is never closed: add the "
                    f"'{end}' (or quote the value if the bracket is part of it)", opened.line + 1)
    mark = getattr(exc, "problem_mark", None)
    return (f"invalid YAML: {problem} (fix the line, or quote a value that holds ': ' or "
            "starts with a special character)", mark.line + 1 if mark else None)


def _parse_error(text: str) -> yaml.YAMLError:
    try:
        yaml.safe_load(text)
    except yaml.YAMLError as exc:
        return exc
    raise ValueError("the text parses")


def _yaml_error(path: Path, exc: yaml.YAMLError) -> FileFormatError:
    message, line = yaml_problem(exc)
    return FileFormatError(message, file=str(path), line=line)


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
