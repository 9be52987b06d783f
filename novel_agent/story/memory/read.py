"""Memory read from its files: `memory/<kind>/<id>.yaml` and `memory/facts.yaml`.

One file per character, place, loop and relationship, whose name is its id, and
facts.yaml; each file parsed and checked (story/memory/records.py) once per
version of it, so a tick reads what changed, not all of memory again. Memory is
loaded from the files every tick, so a hand edit is always seen.
`check_memory_file` reads one file as loading memory reads it, for the doctor.
"""

from __future__ import annotations

import functools
import hashlib
import operator
import os
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

import yaml

from novel_agent.errors import FileFormatError
from novel_agent.files import load_yaml, read_bytes, read_yaml, yaml_line
from novel_agent.story.memory.records import (
    Character,
    Fact,
    Location,
    Loop,
    Relationship,
    check_entity,
    check_items,
)
from novel_agent.story.memory.store import Memory, plain_copy

FILE_ID = re.compile(r"^[^./\\\x00\s][^/\\\x00]{0,119}(?<!\s)$")   # an id that can name its file
FOLDERS = ("characters", "locations", "loops", "relationships")   # one file per item
LEGACY = ("loops", "relationships")     # once memory/<kind>.yaml, one file for all


# Files parsed and checked, each kept while its inode, size and mtime stay the same (every
# write is a new file renamed into place; facts.yaml, appended to, is read on from where it
# was): a tick reads what changed, not all of memory again. The values are never changed:
# what is handed out to be changed is a copy.
_PARSED: dict[str, tuple[tuple[int, int, int], Any]] = {}
PARSED_KEPT = 200_000


def _stamp(path: Path) -> tuple[int, int, int]:
    stat = path.stat()
    return stat.st_ino, stat.st_size, stat.st_mtime_ns


def _remember(path: str, stamp: tuple[int, int, int], value: Any) -> None:
    if len(_PARSED) >= PARSED_KEPT:
        _PARSED.clear()
    _PARSED[path] = (stamp, value)


Stamp = tuple[int, int, int]       # a file's inode, size and mtime_ns
Listed = dict[str, dict[str, tuple[int, int]]]   # folder -> file name -> (mtime_ns, size)


def look(folder: Path, listed: Listed | None = None,
         given: Mapping[str, Sequence[int]] | None = None) -> dict[str, Stamp]:
    """The item files of a one-file-per-item folder, by name in name order, each with its
    stamp: one stat each. `listed` gets each file's (mtime_ns, size), as index.sync.scan
    would see it (no need to look again). `given`: the folder's files' (inode, size,
    mtime_ns, ...) as a look just taken saw them (history/seen.py): no stat taken."""
    if given is not None:
        names = sorted(filter(ITEM_FILE.match, given))
        if listed is not None:
            listed[str(folder)] = {name: (given[name][2], given[name][1]) for name in names}
        return {name: (given[name][0], given[name][1], given[name][2]) for name in names}
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except (FileNotFoundError, NotADirectoryError):
        if listed is not None:
            listed[str(folder)] = {}
        return {}
    try:
        names = sorted(filter(ITEM_FILE.match, os.listdir(fd)))
        stats = list(map(functools.partial(os.stat, dir_fd=fd), names))
    finally:
        os.close(fd)
    if listed is not None:
        listed[str(folder)] = dict(zip(names, map(_SEEN, stats)))
    return dict(zip(names, map(_STAMP, stats)))


ITEM_FILE = re.compile(r"[^.].*\.yaml\Z", re.S)     # an item's file: *.yaml, not hidden
_STAMP = operator.attrgetter("st_ino", "st_size", "st_mtime_ns")
_SEEN = operator.attrgetter("st_mtime_ns", "st_size")


def parsed_item(folder: Path, name: str, stamp: Stamp) -> dict[str, Any]:
    """One item file, parsed and checked once per version of the file (the parsed item
    itself: not to be changed); its id is the file's name without `.yaml`."""
    path = os.path.join(folder, name)
    hit = _PARSED.get(path)
    if hit is not None and hit[0] == stamp:
        kept: dict[str, Any] = hit[1]
        return kept
    data = _parse_entity(folder, Path(path))
    _remember(path, stamp, data)
    return data


def _folder_items(folder: Path, listed: Listed | None = None) -> dict[str, dict[str, Any]]:
    """The parsed items of a one-file-per-item folder by id, in file name order (not to
    be changed); the file name is the id. `listed`: see look."""
    return {name[:-5]: parsed_item(folder, name, stamp)
            for name, stamp in look(folder, listed).items()}


def load_folder(folder: Path) -> dict[str, dict[str, Any]]:
    """The items of a one-file-per-item folder by id; the file name is the id."""
    return {item_id: plain_copy(data) for item_id, data in _folder_items(folder).items()}


def _parse_entity(folder: Path, path: Path) -> dict[str, Any]:
    """One item file parsed and checked; FileFormatError names what is wrong."""
    data = read_yaml(path, {})
    if not isinstance(data, dict):
        raise FileFormatError("expected a mapping of fields (id, name, ...)", file=str(path),
                              line=1)
    if "id" in data and str(data["id"]) != path.stem:
        raise FileFormatError(f"id '{data['id']}' disagrees with the file name: the file "
                              f"name is the id; rename the file to {data['id']}.yaml or "
                              f"set 'id: {path.stem}'", file=str(path),
                              line=yaml_line(path, "id"))
    check_entity(folder.name, data, path)
    data.setdefault("id", path.stem)
    if folder.name in ("characters", "locations"):
        data.setdefault("name", path.stem.replace("_", " ").title())
    return data


def load_list(path: Path, key: str) -> list[dict[str, Any]]:
    """The items of a list file (facts; loops and relationships in the old layout), their
    fields checked. A file only appended to since it was last read (facts.yaml, each tick)
    is parsed from where it was: only the new items."""
    return [dict(item) for item in list_items(path, key)]


def list_items(path: Path, key: str) -> list[dict[str, Any]]:
    """load_list's items as parsed (not to be changed)."""
    try:
        stamp = _stamp(path)
    except FileNotFoundError:
        return []
    hit = _PARSED.get(str(path))
    if hit is not None and hit[0] == stamp:
        kept: list[dict[str, Any]] = hit[1][1]
        return kept
    if hit is not None and hit[0][0] == stamp[0] and hit[0][1] < stamp[1]:
        items = _appended(path, key, hit[1])
        if items is not None:
            _remember(str(path), stamp, (_head(path, stamp[1]), items))
            return items
    items = _load_list(path, key)
    _remember(str(path), stamp, (_head(path, stamp[1]), items))
    return items


def _head(path: Path, size: int) -> tuple[int, str]:
    """(size, sha1 of the file's bytes): what a later append must leave as it was."""
    return size, hashlib.sha1(path.read_bytes()[:size]).hexdigest()


def _appended(path: Path, key: str, cached: tuple[tuple[int, str], list[dict[str, Any]]]
              ) -> list[dict[str, Any]] | None:
    """The cached items plus those appended after them (None if the file was not only
    appended to, or the new part is not a plain list of mappings)."""
    (size, digest), items = cached
    raw = read_bytes(path)
    if hashlib.sha1(raw[:size]).hexdigest() != digest or not items:
        return None
    tail = raw[size:].decode("utf-8", errors="strict")
    if not tail.startswith("- "):
        return None
    try:
        new = load_yaml(tail)
        if not isinstance(new, list) or not all(isinstance(i, dict) for i in new):
            return None
        check_items(key, new, path, key)
    except (yaml.YAMLError, FileFormatError):
        return None        # read whole, so an error names the right line
    return items + new


def _load_list(path: Path, key: str) -> list[dict[str, Any]]:
    data = read_yaml(path, {key: []})
    items = data.get(key, []) if isinstance(data, dict) else data
    if items is None:
        return []
    if not isinstance(items, list):
        raise FileFormatError(f"expected '{key}:' followed by a list of mappings",
                              file=str(path), line=yaml_line(path, key))
    for number, item in enumerate(items):
        if not isinstance(item, dict):
            raise FileFormatError(f"item {number + 1} of '{key}' is {item!r}, not a mapping "
                                  f"of fields", file=str(path),
                                  line=yaml_line(path, *([key] if isinstance(data, dict) else []),
                                                 number))
    check_items(key, items, path, key if isinstance(data, dict) else None)
    return items


def tick_of(item: Mapping[str, Any], key: str) -> int:
    """The tick an item's `key` holds (a loop's `opened_in`, a relationship's `since`), 0
    when it holds none, or not a tick."""
    value = item.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _load_items(memory_dir: Path, kind: str, listed: Listed | None = None) -> list[dict[str, Any]]:
    """Loops or relationships: one file each under memory/<kind>/, in the order they
    began (then by id), and those of an old memory/<kind>.yaml not migrated yet (as
    parsed: not to be changed)."""
    found = _folder_items(memory_dir / kind, listed)
    for item in list_items(memory_dir / f"{kind}.yaml", kind):
        if str(item.get("id")) not in found:
            found[f"legacy:{len(found)}"] = item
    return sorted(found.values(), key=_began(kind))


def _began(kind: str) -> Callable[[Mapping[str, Any]], tuple[int, str]]:
    """The order loops (or relationships) are read in: by the tick each began, then id."""
    began = "opened_in" if kind == "loops" else "since"
    return lambda item: (tick_of(item, began), str(item.get("id")))


def as_read(memory: Memory) -> Memory:
    """`memory` in the order the files would be read back in (in place, and returned):
    characters and places by file name, loops and relationships as _load_items sorts
    them. A replay puts memory so between ticks, as each tick read it from disk."""
    for kind in ("characters", "locations"):
        items = getattr(memory, kind)
        setattr(memory, kind, dict(sorted(items.items(), key=lambda kv: f"{kv[0]}.yaml")))
    memory.loops.sort(key=_began("loops"))
    memory.relationships.sort(key=_began("relationships"))
    return memory


def load_memory(memory_dir: Path) -> Memory:
    """Read memory/ from disk."""
    return read_memory(memory_dir)[0]


def read_memory(memory_dir: Path, listed: Listed | None = None) -> tuple[Memory, Memory]:
    """Read memory/ from disk: a Memory to change, and memory as the files hold it, to
    tell what a tick changed (shared with the parse cache: never to be changed). Only
    the files changed since the last read are parsed; the one copy made is the first.
    `listed` gets what each item folder held (see _folder_items)."""
    # (each item checked against its kind's record as it was read: records.check_entity)
    files = Memory(characters=cast(dict[str, Character],
                                   _folder_items(memory_dir / "characters", listed)),
                   locations=cast(dict[str, Location],
                                  _folder_items(memory_dir / "locations", listed)),
                   loops=cast(list[Loop], _load_items(memory_dir, "loops", listed)),
                   relationships=cast(list[Relationship],
                                      _load_items(memory_dir, "relationships", listed)),
                   facts=cast(list[Fact], list_items(memory_dir / "facts.yaml", "facts")))
    return files.copy(), files


LIST_KEYS = {"facts.yaml": "facts", "loops.yaml": "loops", "relationships.yaml": "relationships"}


def check_memory_file(path: Path) -> None:
    """Read one file of memory/ as loading memory reads it, bypassing the parse cache: an
    item's file under memory/<kind>/, or a list file (facts.yaml, an old loops.yaml or
    relationships.yaml). A FileFormatError says what is wrong; other files pass."""
    path = Path(path)
    if path.parent.name in FOLDERS:
        _parse_entity(path.parent, path)
    elif path.name in LIST_KEYS:
        _load_list(path, LIST_KEYS[path.name])
