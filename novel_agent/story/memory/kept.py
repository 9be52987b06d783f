"""Memory kept from one tick to the next: a tick reads only the files that changed.

`read_memory` (story/memory/read.py) builds a tick's memory from the files: every
item file stat'ed, the parsed items (cached while a file's stat stays the same)
gathered in order, and the whole of it copied, so that the tick can change its
copy while `before`, the files' version, tells the commit what changed. At
hundreds of characters and loops the gathering and the copy cost more than
the rest of reading.

A session keeps one `KeptMemory`. Its `read` gives what read_memory gives (the
same items, in the same order, equal field for field): the first time by
read_memory itself; after a tick that landed (`landed`: its commit wrote every
difference, so its memory is what the files hold), the landed memory again,
with only the files whose stat changed since the last look read and put in
place: the ones the commit wrote (their new items, in the order a fresh read
gives) and any edited, added or removed by hand. A stat per file is still taken
every tick, since an edit in place changes nothing but the file's stat. What
the tick then changes in place is its memory; `before` (the parse cache's
items) is never changed. A tick that did not land (it failed, or `novel
context` stopped before the commit), a memory replaced during the tick, or the
old one-file layout (memory/loops.yaml) make the next read a whole one.

The indexes of story/memory/lookup.py live on with the dicts and lists they index:
they are told of the items that moved or were written (`reordered`, `learned`,
`loops_from`), so what a tick changed in place is indexed again.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping, Sequence
from itertools import compress
from operator import itemgetter, ne
from pathlib import Path
from typing import Any, cast

from novel_agent.story.memory.lookup import learned, loops_from, reordered
from novel_agent.story.memory.read import (
    FOLDERS,
    ITEM_FILE,
    LEGACY,
    Listed,
    Stamp,
    list_items,
    look,
    parsed_item,
    read_memory,
    tick_of,
)
from novel_agent.story.memory.records import Fact
from novel_agent.story.memory.store import Memory, plain_copy

BEGAN = {"loops": "opened_in", "relationships": "since"}   # what a list is ordered by
Key = tuple[int, str]     # where an item of a list goes: the tick it began, its id
_ID = itemgetter("id")
_STEM = itemgetter(slice(None, -len(".yaml")))     # a file's name -> the item's id


class Stale(Exception):
    """What was kept does not match what the files say: read memory whole."""


class KeptMemory:
    """The memory of one project's memory/ folder, kept between a session's ticks."""

    def __init__(self, memory_dir: Path):
        self.memory_dir = Path(memory_dir)
        self.work: Memory | None = None       # the memory handed out to change
        self.files = Memory()                  # as the files hold it (never changed)
        self.stamps: dict[str, dict[str, Stamp]] = {}   # folder -> file name -> stamp
        self.order: dict[str, list[Key]] = {}  # a list kind's items' keys, in order
        self.keys: dict[str, dict[str, Key]] = {}   # a list kind's keys by id
        self.out = False                       # handed out and not landed yet
        self.whole_reads = 0                   # reads that read memory whole

    def read(self, listed: Listed | None = None,
             given: Mapping[str, Mapping[str, Sequence[int]]] | None = None,
             moved: Mapping[str, Iterable[str]] | None = None) -> tuple[Memory, Memory]:
        """(memory to change, memory as the files hold it), as read_memory gives them
        (see the module docstring); `listed` gets what each item folder held. `given`:
        each item folder's files (by kind) as a look just taken saw them: no stat.
        `moved`, with `given`: the only files (by kind, by name) whose stamp may differ
        from the last read's: the others are not looked at (and `listed` gets nothing)."""
        keep = self.work is not None and not self.out and not any(
            (self.memory_dir / f"{kind}.yaml").exists() for kind in LEGACY)
        told = keep and given is not None and moved is not None and bool(self.stamps)
        if told:
            assert given is not None and moved is not None
            looks = {kind: self._moved(kind, given[kind], moved.get(kind, ()))
                     for kind in FOLDERS}
        else:
            looks = {kind: look(self.memory_dir / kind, listed, given[kind] if given else None)
                     for kind in FOLDERS}
        try:
            if not keep or self.work is None:
                raise Stale
            self._update(looks)
            work = self.work
        except Stale:
            if told:        # a read in part gone stale: every file's stamp, for a whole one
                assert given is not None
                looks = {kind: look(self.memory_dir / kind, listed, given[kind])
                         for kind in FOLDERS}
            work = self._whole(looks)
        except BaseException:
            self.work = None
            raise
        self.out = True
        return work, self.files

    def _moved(self, kind: str, given: Mapping[str, Sequence[int]],
               names: Iterable[str]) -> dict[str, Stamp]:
        """The stamps of `kind`'s files now, as look gives them, made from the last read's
        with only `names` (those that may have moved) taken again from `given`."""
        was = self.stamps.get(kind, {})
        now: dict[str, Stamp] | None = None
        for name in names:
            seen = given.get(name) if ITEM_FILE.match(name) else None
            stamp = None if seen is None else (seen[0], seen[1], seen[2])
            if was.get(name) != stamp:
                if now is None:
                    now = dict(was)
                if stamp is None:
                    now.pop(name, None)
                else:
                    now[name] = stamp
        if now is None:
            return was
        return now if now.keys() == was.keys() else dict(sorted(now.items()))   # name order

    def landed(self, memory: Memory) -> None:
        """The tick handed `memory` committed it (every difference written): the next
        read starts from it. Another memory (a revision's) makes it read whole."""
        if memory is not self.work:
            self.work = None
        self.out = False

    # -- whole and in part --------------------------------------------------------------

    def _whole(self, looks: dict[str, dict[str, Stamp]]) -> Memory:
        self.work, self.whole_reads = None, self.whole_reads + 1
        work, self.files = read_memory(self.memory_dir)
        self.stamps = looks
        self.order = {kind: [_key(kind, item) for item in getattr(self.files, kind)]
                      for kind in BEGAN}
        self.keys = {kind: {key[1]: key for key in self.order[kind]} for kind in BEGAN}
        if all(len(getattr(self.files, kind)) == len(looks[kind]) for kind in FOLDERS) and \
                all(len(self.keys[kind]) == len(self.order[kind]) for kind in BEGAN):
            self.work = work     # else items of the old layout, or two of one id: not kept
        return work

    def _update(self, looks: dict[str, dict[str, Stamp]]) -> None:
        assert self.work is not None
        for kind in FOLDERS:
            now, was = looks[kind], self.stamps.get(kind, {})
            if now != was or len(getattr(self.work, kind)) != len(getattr(self.files, kind)):
                changed = list(compress(now, map(ne, map(was.get, now), now.values())))
                gone = sorted(was.keys() - now.keys())
                update = self._update_list if kind in BEGAN else self._update_dict
                update(kind, now, changed, gone)
            self.stamps[kind] = now
        self._update_facts()

    def _update_dict(self, kind: str, now: dict[str, Stamp], changed: list[str],
                     gone: list[str]) -> None:
        """Characters or places: each changed file's item put in place (the kept one
        refilled), the dicts put back in the files' order when items came or went."""
        files, work = getattr(self.files, kind), getattr(self.work, kind)
        moved = bool(gone)
        for name in gone:
            files.pop(name[:-5], None)
            work.pop(name[:-5], None)
        for name in changed:
            data, key = parsed_item(self.memory_dir / kind, name, now[name]), name[:-5]
            moved = moved or key not in files or key not in work
            files[key] = data
            learned(files, key)
            if key in work:
                _refill(work[key], data)
                learned(work, key)
            else:
                work[key] = plain_copy(data)
        if moved:
            keys = list(map(_STEM, now))          # the files' order
            for entities in (files, work):
                if list(entities) != keys:
                    try:
                        items = dict(zip(keys, map(entities.__getitem__, keys)))
                    except KeyError:
                        raise Stale from None
                    if len(items) != len(entities):
                        raise Stale
                    entities.clear()
                    entities.update(items)
                    reordered(entities)

    def _update_list(self, kind: str, now: dict[str, Stamp], changed: list[str],
                     gone: list[str]) -> None:
        """Loops or relationships: the items the tick added (at the end) and those of the
        changed files put in their place (by the tick they began, then by id)."""
        files, work = getattr(self.files, kind), getattr(self.work, kind)
        if len(work) < len(files):
            raise Stale
        added = {str(item.get("id")): item for item in work[len(files):]}   # by the tick
        del work[len(files):]
        first = len(files)        # the first place whose item moved
        refilled: list[int] = []  # places whose item stayed, refilled (its words may differ)
        for name in gone:
            first = min(first, self._take(kind, name[:-5]))
        for name in changed:
            data, key = parsed_item(self.memory_dir / kind, name, now[name]), name[:-5]
            item = added.pop(key, None)
            if key in self.keys[kind]:          # a file there before, changed
                if item is not None:
                    raise Stale
                at = bisect.bisect_left(self.order[kind], self.keys[kind][key])
                if at >= len(work) or self.order[kind][at] != self.keys[kind][key]:
                    raise Stale
                item = work[at]
                if _key(kind, data) == self.order[kind][at]:
                    files[at] = data
                    _refill(item, data)
                    refilled.append(at)
                    continue
                first = min(first, self._take(kind, key))
            first = min(first, self._put(kind, data, {} if item is None else item))
        try:
            if added or len(files) != len(now) or list(map(_ID, work)) != list(map(_ID, files)):
                raise Stale
        except KeyError:
            raise Stale from None
        loops_from(work, first, refilled)
        loops_from(files, first, refilled)

    def _take(self, kind: str, key: str) -> int:
        """Take the item whose id is `key` out of the lists; where it was."""
        if key not in self.keys[kind]:
            raise Stale
        at = bisect.bisect_left(self.order[kind], self.keys[kind].pop(key))
        if at >= len(self.order[kind]) or self.order[kind][at][1] != key:
            raise Stale
        del self.order[kind][at], getattr(self.files, kind)[at], getattr(self.work, kind)[at]
        return at

    def _put(self, kind: str, data: dict[str, Any], item: dict[str, Any]) -> int:
        """Put `data` (and `item`, made its copy) in their place; where that is."""
        key = _key(kind, data)
        at = bisect.bisect_left(self.order[kind], key)
        if key[1] in self.keys[kind]:
            raise Stale
        _refill(item, data)
        self.order[kind].insert(at, key)
        self.keys[kind][key[1]] = key
        getattr(self.files, kind).insert(at, data)
        getattr(self.work, kind).insert(at, item)
        return at

    def _update_facts(self) -> None:
        """facts.yaml: appended to (a tick's commit), the new facts copied; else all."""
        assert self.work is not None
        now, was = list_items(self.memory_dir / "facts.yaml", "facts"), self.files.facts
        if now is was:
            return
        work = self.work.facts
        if len(work) in (len(was), len(now)) and now[:len(was)] == was:
            # appended to: by the tick (its facts are there) or by someone else (a holder
            # that reads and never writes, as the bench's server): the new ones copied
            if work[len(was):] != now[len(was):]:        # else kept as they are (indexed)
                work[len(was):] = [plain_copy(fact) for fact in now[len(was):]]
        else:
            work[:] = plain_copy(now)
        self.files.facts = cast(list[Fact], now)


def item_files(moved: Iterable[str]) -> dict[str, list[str]]:
    """The item files among `moved` (paths relative to the project: "memory/loops/x.yaml"),
    by kind, by name: what `read` is told may have moved."""
    out: dict[str, list[str]] = {kind: [] for kind in FOLDERS}
    for path in moved:
        top, _, rest = path.partition("/")
        kind, _, name = rest.partition("/")
        if top == "memory" and kind in out and name and "/" not in name:
            out[kind].append(name)
    return out


def _key(kind: str, item: dict[str, Any]) -> Key:
    """Where an item of a list kind goes: by the tick it began, then by id."""
    return tick_of(item, BEGAN[kind]), str(item.get("id"))


def _refill(item: dict[str, Any], data: dict[str, Any]) -> None:
    """Make `item` (kept, indexed) a copy of `data`, field for field and in its order."""
    item.clear()
    item.update(plain_copy(data))
