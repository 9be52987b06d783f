"""The one writer of project files: atomic writes, YAML, front matter.

Every file novel_agent writes goes through `atomic_write` (temp file, fsync,
rename) or a `journal.Transaction` (many files that land together). Readers
raise FileFormatError naming the file and line, never a bare YAML traceback.

A project folder is something people share and download, so nothing in it may
make the program read outside it: `read_bytes` (and every reader over it)
refuses a file that, through a link, lies outside the project it is in
(OutsideLinkError), without opening the target; a link that stays inside is
read. `inside` is the same test for a path the web server is asked for. Every
YAML text is parsed by `load_yaml` (or composed by `compose_yaml`), which
refuses aliases that expand to more than ALIAS_BUDGET nodes beyond the
document's own (an alias bomb: nine nested anchors are 387 million) and a
recursive alias, as a YAML error naming the line.
"""

from __future__ import annotations

import os
import re
import secrets
from pathlib import Path
from typing import Any

import yaml

from novel_agent.errors import FileFormatError, OutsideLinkError

FRONT = "---"
# libyaml's loader when PyYAML was built with it: several times faster on the
# memory files a long story accumulates; the pure-Python one otherwise.
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
ALIAS_BUDGET = 100_000     # nodes a document's aliases may add to it when expanded


class AliasError(yaml.YAMLError):
    """Aliases that expand too far (or into themselves): `problem` says which, at
    `problem_mark`."""

    def __init__(self, problem: str, mark: Any):
        self.problem, self.problem_mark = problem, mark
        super().__init__(problem)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    return list(node.value) if isinstance(node, yaml.SequenceNode) else []


def check_aliases(root: yaml.Node) -> None:
    """Raise AliasError when the document under `root` would have more than ALIAS_BUDGET
    nodes beyond its own once its aliases are expanded, or an alias inside itself: a
    walk over each node once (aliases share their node), the expanded sizes added up."""
    size: dict[int, int] = {}
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    open_: set[int] = set()
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            open_.discard(key)
            size[key] = 1 + sum(size[id(child)] for child in _children(node))
            continue
        if key in size:
            continue
        if key in open_:
            raise AliasError("an alias inside the value it names (a recursive alias): write "
                             "the value out", node.start_mark)
        open_.add(key)
        stack.append((node, True))
        stack += [(child, False) for child in _children(node) if id(child) not in size]
    if size[id(root)] > len(size) + ALIAS_BUDGET:
        raise AliasError(f"its aliases expand to {size[id(root)]:,} values, more than "
                         f"{ALIAS_BUDGET:,} beyond the file's own (an alias bomb?): write the "
                         "values out, or use fewer aliases", root.start_mark)


class SafeLoader(_Loader):  # type: ignore[misc,valid-type]
    """The safe loader (libyaml's when there is one), aliases bounded: check_aliases."""

    aliased = True          # False: the text holds no '*', so no alias to check

    def get_single_node(self) -> Any:
        node = super().get_single_node()
        if node is not None and self.aliased:
            check_aliases(node)
        return node


class PureSafeLoader(yaml.SafeLoader):
    """PyYAML's own safe loader (its messages and marks, as yaml.safe_load gives them),
    aliases bounded: check_aliases."""

    aliased = True

    def get_single_node(self) -> Any:
        node = super().get_single_node()
        if node is not None and self.aliased:
            check_aliases(node)
        return node


def _loader(text: str, pure: bool) -> Any:
    loader = (PureSafeLoader if pure else SafeLoader)(text)
    loader.aliased = "*" in text        # no alias without one: most texts need no walk
    return loader


def load_yaml(text: str, *, pure: bool = False) -> Any:
    """The data of a YAML text, aliases bounded (AliasError, a yaml.YAMLError). `pure`:
    with PyYAML's own parser, not libyaml's."""
    loader = _loader(text, pure)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def compose_yaml(text: str, *, pure: bool = False) -> yaml.Node | None:
    """The node tree of a YAML text (for lines and comments), aliases bounded."""
    loader = _loader(text, pure)
    try:
        node: yaml.Node | None = loader.get_single_node()
        return node
    finally:
        loader.dispose()


def _load(text: str) -> Any:
    return load_yaml(text)


PROJECT_MARKS = ("project.yaml", ".novel")    # what makes a folder a project's
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
    if isinstance(exc, AliasError):
        return exc.problem, exc.problem_mark.line + 1 if exc.problem_mark else None
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
        load_yaml(text)
    except yaml.YAMLError as exc:
        return exc
    raise ValueError("the text parses")


def _yaml_error(path: Path, exc: yaml.YAMLError) -> FileFormatError:
    message, line = yaml_problem(exc)
    return FileFormatError(message, file=str(path), line=line)


def _project_of(path: str) -> str | None:
    """The project folder `path` (absolute, links not resolved) lies in: the outermost
    folder above it holding project.yaml or .novel (None: in no project). Outermost, so a
    folder linked in from elsewhere that holds a project.yaml of its own cannot pass for
    the project."""
    folders = []
    folder = os.path.dirname(path)
    while True:
        folders.append(folder)
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    for folder in reversed(folders):
        if any(os.path.lexists(os.path.join(folder, mark)) for mark in PROJECT_MARKS):
            return folder
    return None


def leaves(root: Path | str, path: Path | str) -> bool:
    """Whether `path`, its links and `..` followed, lies outside the folder `root` (links
    are followed by name only: no target is opened)."""
    real_root = os.path.realpath(root)
    try:
        real = os.path.realpath(path, strict=False)
    except (OSError, ValueError):    # a loop of links
        return True
    return os.path.commonpath([real_root, real]) != real_root


def inside(root: Path, relative: str) -> Path | None:
    """`root/relative` if it is a file inside `root` (after resolving links and `..`),
    else None: what `novel serve` hands out of a project's export/."""
    path = Path(root) / relative
    if leaves(root, path):
        return None
    real = Path(os.path.realpath(path))
    return real if real.is_file() else None


def outside_link(path: Path | str) -> str | None:
    """The project folder that `path` is in if, through a link, the file lies outside it
    (None: no link on the way, a link that stays inside, or a file in no project)."""
    absolute = os.path.abspath(path)
    if os.path.realpath(absolute) == absolute:
        return None          # no link on the way: the common case, one realpath
    root = _project_of(absolute)
    return root if root is not None and leaves(root, absolute) else None


def refuse_outside_link(path: Path | str) -> None:
    """Raise OutsideLinkError, naming the file, when `path` lies outside its project
    through a link. The target is never opened."""
    if outside_link(path) is not None:
        raise OutsideLinkError("a link to outside the project, not read (nothing in a project "
                               "may make the program read other files): copy the file in "
                               "instead of linking it", file=str(path))


def read_bytes(path: Path | str) -> bytes:
    """A project file's bytes; one that is a link out of its project an OutsideLinkError."""
    refuse_outside_link(path)
    return Path(path).read_bytes()


def read_text(path: Path) -> str:
    """A project text file as str; one that is not UTF-8 is a FileFormatError saying where."""
    data = read_bytes(path)
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
        node = compose_yaml(read_bytes(path).decode("utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError, FileFormatError):
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
