r"""The lorebook: `lore/*.yaml` entries the writer gets when one of their keys comes up.

An entry (one per file, or a list of them, or `entries:` with a list):

    name: The brass locket            # default: the file name
    keys: [locket, "brass locket"]    # words or phrases (or regular expressions)
    content: Edda's mother's locket; it holds a lock of white hair and a key.
                                      # at most LORE_MAX_CHARS (10,000) characters
    priority: 10                      # higher goes in first when space is short
    always: false                     # true: in every prompt, keys or not
    case_sensitive: false
    regex: false                      # true: each key is a regular expression (RE2)

It fires when a key appears (as a whole word or phrase, or a regex match) in
what the scene is about: the intention, the steer note, the names of the
scene's characters and place, the last full-text scene. A malformed entry is
named with its file and line and skipped; it never stops a tick. Reading the
files is `load_lorebook`'s; everything else here is pure.

A regex key is a user's pattern run against every prompt's texts, so it is matched
by RE2 (google-re2), whose time is linear in the text: under Python's backtracking
`re` a key such as `(\w+\s?)+$` spins for ever on one sentence. RE2 takes Python's
syntax but for backreferences and lookarounds (and `\Z`, written `\z`); a key it
cannot take is a problem of its entry, named with the file and line.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import re2
import yaml

from novel_agent.errors import FileFormatError
from novel_agent.files import compose_yaml, load_yaml, read_text, yaml_problem

FIELDS = {"name", "keys", "content", "priority", "always", "case_sensitive", "regex"}
LORE_MAX_CHARS = 10_000     # an entry's content: about 2,500 tokens, a prompt holds a few
SUFFIXES = (".yaml", ".yml")


class Matcher(Protocol):
    """A compiled key: Python's `re.Pattern` (a plain key) or RE2's (a regex key)."""

    def search(self, text: str) -> Any: ...


def compile_regex(key: str, *, case_sensitive: bool) -> Matcher:
    """A regex key compiled by RE2 (linear time); re2.error if RE2 cannot take it."""
    options = re2.Options()
    options.case_sensitive = case_sensitive
    options.log_errors = False         # the error is ours to report, not absl's on stderr
    compiled: Matcher = re2.compile(key, options)
    return compiled


def regex_problem(key: str) -> str:
    """What is wrong with `key` as a regex key, or "" when RE2 takes it."""
    try:
        compile_regex(key, case_sensitive=True)
        return ""
    except re2.error as exc:
        said = exc.args[0] if exc.args else ""          # RE2 says it in bytes
        why = said.decode("utf-8", "replace") if isinstance(said, bytes) else str(said)
    try:
        re.compile(key)
    except re.error as exc:
        return f"key '{key}' is not a valid regular expression: {exc}"
    return (f"key '{key}' is not supported ({why}): use a plain key or a simpler pattern "
            "(regex keys run on RE2: no backreferences or lookarounds)")


@dataclass(frozen=True)
class LoreEntry:
    """One lorebook entry, checked."""

    key: str                         # "locket", or "orders#2" for the 2nd of a list
    name: str
    keys: tuple[str, ...]
    content: str
    priority: int = 0
    always: bool = False
    case_sensitive: bool = False
    regex: bool = False
    source: str = ""                 # the file
    line: int = 1

    def patterns(self) -> list[Matcher]:
        """One compiled pattern per key (a regex key by RE2: see the module's docstring)."""
        if self.regex:
            return [compile_regex(k, case_sensitive=self.case_sensitive) for k in self.keys]
        flags = 0 if self.case_sensitive else re.IGNORECASE
        return [re.compile(r"(?<!\w)" + r"\s+".join(map(re.escape, k.split())) + r"(?!\w)", flags)
                for k in self.keys]

    def fires(self, texts: Sequence[str]) -> str:
        """Why the entry fires for `texts` ("always", or the key found), or ""."""
        if self.always:
            return "always"
        for key, pattern in zip(self.keys, self.patterns()):
            if any(pattern.search(t) for t in texts if t):
                return f"key '{key}'"
        return ""


@dataclass
class Lorebook:
    """The entries that could be read, and one line per entry that could not."""

    entries: list[LoreEntry] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def fired(self, texts: Sequence[str]) -> list[tuple[LoreEntry, str]]:
        """The entries that fire for `texts`, highest priority first, with why."""
        hits = [(e, why) for e in self.entries if (why := e.fires(texts))]
        return sorted(hits, key=lambda hit: (-hit[0].priority, hit[0].key))


def lore_files(lore_dir: Path) -> list[Path]:
    """The lorebook's files, in name order."""
    if not lore_dir.is_dir():
        return []
    return sorted(p for p in lore_dir.iterdir() if p.suffix in SUFFIXES and p.is_file()
                  and not p.name.startswith("."))


def load_lorebook(lore_dir: Path) -> Lorebook:
    """Read every lore file; what cannot be read becomes a problem line, not an error."""
    book = Lorebook()
    for path in lore_files(lore_dir):
        entries, problems = read_lore_file(path)
        book.entries += entries
        book.problems += problems
    return book


def read_lore_file(path: Path) -> tuple[list[LoreEntry], list[str]]:
    """The entries of one file, and the problems of those that were skipped."""
    try:
        return parse_lore(read_text(path), path)
    except FileFormatError as exc:
        return [], [f"{exc}; the file is skipped"]
    except OSError as exc:
        return [], [f"{path}: cannot be read ({exc.strerror}); the file is skipped"]


def parse_lore(text: str, path: Path) -> tuple[list[LoreEntry], list[str]]:
    """Entries from a lore file's text (the file named for errors)."""
    try:
        node = compose_yaml(text, pure=True)
        data = load_yaml(text, pure=True)
    except yaml.YAMLError as exc:
        problem, line = yaml_problem(exc)
        where = f"{path}:{line}" if line else str(path)
        return [], [f"{where}: {problem}; the file is skipped"]
    if data is None:
        return [], []
    items, nodes = _entry_nodes(data, node)
    if items is None:
        return [], [f"{path}:1: expected a mapping (keys, content, ...) or a list of them; "
                    "the file is skipped"]
    entries, problems = [], []
    for number, (item, item_node) in enumerate(zip(items, nodes), 1):
        key = path.stem if len(items) == 1 else f"{path.stem}#{number}"
        try:
            entries.append(check_entry(item, key=key, source=str(path),
                                       line=item_node.start_mark.line + 1, lines=item_node))
        except FileFormatError as exc:
            problems.append(f"{exc}; the entry is skipped")
    return entries, problems


def _entry_nodes(data: Any, node: Any) -> tuple[list[Any] | None, list[Any]]:
    """The entry mappings of a file and their YAML nodes (for lines)."""
    if isinstance(data, dict) and set(data) == {"entries"}:
        data = data["entries"]
        # a merge key (`<<: {entries: ...}`) leaves no `entries` node: lines from the top
        node = next((v for k, v in node.value if k.value == "entries"), node)
    if isinstance(data, dict):
        return [data], [node]
    if isinstance(data, list):
        return data, (list(node.value) if isinstance(node, yaml.SequenceNode)
                      else [node] * len(data))
    return None, []


def _line_of(node: Any, key: str, default: int) -> int:
    if isinstance(node, yaml.MappingNode):
        for k, _ in node.value:
            if k.value == key:
                line: int = k.start_mark.line + 1
                return line
    return default


def check_entry(item: Any, *, key: str, source: str, line: int, lines: Any = None) -> LoreEntry:
    """A checked LoreEntry, or FileFormatError naming the file, line and field."""
    def fail(message: str, field_name: str | None = None) -> FileFormatError:
        at = _line_of(lines, field_name, line) if field_name else line
        return FileFormatError(message, file=source, line=at)

    if not isinstance(item, dict):
        raise fail(f"a lore entry must be a mapping (keys, content, ...), not {item!r}")
    unknown = sorted(str(k) for k in item if k not in FIELDS)
    if unknown:
        raise fail(f"unknown field '{unknown[0]}' (fields: {', '.join(sorted(FIELDS))})",
                   unknown[0])
    content = item.get("content")
    if not isinstance(content, str) or not content.strip():
        raise fail("'content' must be the text the writer should know", "content")
    if len(content.strip()) > LORE_MAX_CHARS:
        raise fail(f"'content' is {len(content.strip()):,} characters: an entry holds at most "
                   f"{LORE_MAX_CHARS:,} (about 2,500 tokens; a prompt holds a few): split it "
                   "into entries with keys of their own", "content")
    keys = item.get("keys", [])
    keys = [keys] if isinstance(keys, str) else keys
    if not isinstance(keys, list) or not all(isinstance(k, (str, int)) and str(k).strip()
                                             for k in keys):
        raise fail("'keys' must be a list of words or phrases", "keys")
    flags = {}
    for name in ("always", "case_sensitive", "regex"):
        value = item.get(name, False)
        if not isinstance(value, bool):
            raise fail(f"'{name}' must be true or false, not {value!r}", name)
        flags[name] = value
    if not keys and not flags["always"]:
        raise fail("no 'keys': the entry would never fire (or set 'always: true')", "keys")
    priority = item.get("priority", 0)
    if isinstance(priority, bool) or not isinstance(priority, int):
        raise fail(f"'priority' must be a whole number, not {priority!r}", "priority")
    entry = LoreEntry(key=key, name=str(item.get("name") or key).strip(),
                      keys=tuple(str(k).strip() for k in keys), content=content.strip(),
                      priority=priority, source=source, line=line, **flags)
    problem = next(filter(None, map(regex_problem, entry.keys)), "") if entry.regex else ""
    if problem:
        raise fail(problem, "keys")
    return entry


def entry_text(entry: LoreEntry) -> str:
    """How an entry reads in a prompt."""
    return f"{entry.name}: {entry.content}"


def entry_yaml(name: str, keys: Iterable[str], content: str, *, priority: int = 0,
               always: bool = False, regex: bool = False,
               case_sensitive: bool = False) -> dict[str, Any]:
    """A new entry as the mapping `novel lore add` writes (defaults left out)."""
    data: dict[str, Any] = {"name": name, "keys": list(keys), "content": content}
    data.update({k: v for k, v in (("priority", priority), ("always", always),
                                   ("regex", regex), ("case_sensitive", case_sensitive)) if v})
    return data


def find_entry(book: Lorebook, name: str) -> LoreEntry | None:
    """An entry by its file key ("the_brass_locket", "orders#2"), its name, or one of the
    keys that fire it, case-insensitive."""
    wanted = name.strip().lower()
    matches: tuple[Callable[[LoreEntry], bool], ...] = (
        lambda e: wanted in (e.key.lower(), e.name.lower()),
        lambda e: wanted in (k.lower() for k in e.keys))
    for match in matches:
        found = next((e for e in book.entries if match(e)), None)
        if found is not None:
            return found
    return None


def entry_stem(name: str) -> str:
    """The file name (less .yaml) of a new entry called `name`: its words in lower case,
    in any script, joined by '_' ("The brass locket" -> "the_brass_locket", "灯台" ->
    "灯台"); a name with no letter or digit ("★") gets "entry_" and 8 hex digits of its
    hash, so that two such names get two files, and one name always the same."""
    name = unicodedata.normalize("NFC", name.strip())
    words = "".join(c if unicodedata.category(c)[0] in "LMN" else " " for c in name.lower())
    stem = "_".join(words.split())[:60].rstrip("_")
    return stem or "entry_" + hashlib.sha1(name.encode()).hexdigest()[:8]


def new_entry_path(lore_dir: Path, name: str) -> Path:
    """Where `novel lore add` writes an entry called `name` (never over a file)."""
    path = lore_dir / f"{entry_stem(name)}.yaml"
    if path.exists():
        raise FileFormatError("a lore file of that name exists: edit it, or pick another name",
                              file=str(path))
    return path
