"""Memory written back: only what changed, in a layout that lets a commit do so.

Memory lives in one file per character, place, loop and relationship
(`memory/<kind>/<id>.yaml`, the file name is the id: read.load_memory reads
them) and one `memory/facts.yaml`. `stage_memory` puts into a commit's
transaction the files of the items a tick added, changed or dropped, and the
facts it added as an append to facts.yaml; so a tick's commit costs the same
at tick 10 and tick 10,000. A file written over keeps its author's comments,
key order and layout (yaml_comments.keep_comments: a file the program laid
out and nobody touched is written as dump_yaml lays it out, and costs a read,
a parse and a dump of the old text). An author's own keys are kept like the
rest: an item's unknown fields are memory's (records.py leaves them alone), and
the top-level keys of facts.yaml other than `facts` are the file's, kept where
they stand, byte for byte (the facts added go in before a key after the list).
`stage_migration` moves a project of the old layout (one memory/loops.yaml, one
memory/relationships.yaml) to this one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from itertools import compress, repeat
from operator import contains, itemgetter, ne
from pathlib import Path
from typing import Any

import yaml

from novel_agent.errors import FileFormatError
from novel_agent.files import dump_yaml, load_yaml, read_bytes, read_yaml
from novel_agent.story.memory.read import FILE_ID, FOLDERS, LEGACY, load_folder, load_list
from novel_agent.story.memory.records import Fact
from novel_agent.story.memory.store import Memory, relationship_id, slug, unique_id
from novel_agent.story.project.journal import Transaction
from novel_agent.yaml_comments import keep_comments, text_of

_ID = itemgetter("id")


def _by_id(memory: Memory, kind: str) -> dict[str, dict[str, Any]]:
    items = getattr(memory, kind)
    return items if isinstance(items, dict) else dict(zip(map(str, map(_ID, items)), items))


def _changed(now: dict[str, Any], old: dict[str, Any]) -> Iterator[str]:
    """The keys of `now` whose value `old` does not hold (compared without a Python step
    per item: a tick changes a few of hundreds)."""
    return compress(now, map(ne, map(old.get, now), now.values()))


def memory_files(memory: Memory, memory_dir: Path) -> dict[Path, str]:
    """Every file that holds `memory`, as {path: text} (ids given to items without one)."""
    give_ids(memory)
    files = {memory_dir / kind / f"{item_id}.yaml": dump_yaml(data)
             for kind in FOLDERS for item_id, data in _by_id(memory, kind).items()}
    files[memory_dir / "facts.yaml"] = dump_yaml({"facts": memory.facts})
    return files


def stage_memory(txn: Transaction, memory: Memory, memory_dir: Path,
                 before: Memory | None = None) -> None:
    """Put into `txn` the memory files that changed since `before` (all without it): the
    file of each character, place, loop and relationship added, changed or gone, and
    the facts added appended to facts.yaml (written whole when older facts changed or
    the file is not in the form an append continues). An old memory/loops.yaml or
    relationships.yaml is moved to one file per item in the same transaction."""
    for kind in FOLDERS:
        legacy = memory_dir / f"{kind}.yaml"
        moving = kind in LEGACY and legacy.is_file()
        if kind in LEGACY and (moving or before is None or   # else each came from its file
                               not all(map(contains, getattr(memory, kind), repeat("id")))):
            give_ids(memory, [kind])
        now, old = _by_id(memory, kind), {} if before is None or moving else _by_id(before, kind)
        for item_id in _changed(now, old):
            path = memory_dir / kind / f"{item_id}.yaml"
            txn.stage(path, written_over(path, dump_yaml(now[item_id]), as_laid_out=True))
        for item_id in old.keys() - now.keys():
            txn.remove(memory_dir / kind / f"{item_id}.yaml")
        if moving:
            txn.remove(legacy)
    _stage_facts(txn, memory.facts, memory_dir / "facts.yaml", before.facts if before else None)


def _stage_facts(txn: Transaction, facts: list[Fact], path: Path,
                 before: list[Fact] | None) -> None:
    """facts.yaml: the facts added appended to its list (put in before an author's keys
    that follow the list), else the file written whole with the author's keys kept."""
    if before is not None and facts == before:
        return
    text = _text(path)
    at = _list_end(text) if before is not None and facts[:len(before)] == before else None
    if at is not None and text is not None and before is not None:
        added = dump_yaml(facts[len(before):])
        if at == len(text):
            txn.append(path, added)
            return
        spliced = text[:at] + added + text[at:]
        if _facts_of(spliced) == facts:          # (else written whole, below)
            txn.stage(path, spliced)
            return
    txn.stage(path, written_over(path, dump_yaml(_with_theirs(path, text, facts)),
                                 as_laid_out=True))


def written_over(path: Path, text: str, *, as_laid_out: bool = False) -> str:
    """`text` (dump_yaml's) as it is written over the file at `path`: with the comments
    an author put in the file, and its key order (yaml_comments.keep_comments); with
    `as_laid_out`, with the layout an author gave it too (its quotes, its flow lists):
    a line the program does not change keeps its bytes."""
    return keep_comments(text_of(path), text, laid_out=dump_yaml if as_laid_out else None)


def _text(path: Path) -> str | None:
    try:
        return read_bytes(path).decode("utf-8")
    except (OSError, UnicodeDecodeError, FileFormatError):
        return None


_HEAD = re.compile(r"^facts:[ \t]*\n", re.M)
_NOT_AN_ITEM = re.compile(r"^(?!- |-$|[ \t#]|$)", re.M)   # a line at column 0, not "- "
_FIRST = re.compile(r"^(?![ \t]*(?:#.*)?$).", re.M)        # the first line that is not a comment
_NOTES_ABOVE = re.compile(r"(?:^(?:#.*)?\n)*\Z", re.M)   # comment and blank lines at the end


def _list_end(text: str | None) -> int | None:
    """Where items dumped at column 0 and put into `text` continue its `facts:` list (None
    when nowhere): `facts:` at column 0 then a block list at column 0 (or nothing); before
    it comments or an author's keys (a mapping without `facts`, read alone), after it
    nothing (the end of the text) or an author's keys, from the first line at column 0
    that is no item, and the comment and blank lines right above it (they are its)."""
    if not text or not text.endswith("\n"):
        return None
    head = _HEAD.search(text)
    if head is None or not _theirs_before(text[:head.start()]):
        return None
    first = _FIRST.search(text, head.end())
    if first is not None and first.group() != "-":
        return None
    after = _NOT_AN_ITEM.search(text, head.end())
    if after is None:
        return len(text)
    if text.startswith(("---", "..."), after.start()):
        return None                     # another document
    notes = _NOTES_ABOVE.search(text[:after.start()], head.end())
    return notes.start() if notes is not None else after.start()


def _theirs_before(text: str) -> bool:
    """Whether what comes before `facts:` is comments, or an author's keys: a mapping
    without `facts` (so `facts:` at column 0 after it is a key of the same mapping)."""
    if not _FIRST.search(text):
        return True
    if "&" in text or "*" in text or text.lstrip().startswith(("---", "%")):
        return False                    # anchors, aliases, documents: not read alone here
    try:
        data = load_yaml(text)         # aliases bounded
    except yaml.YAMLError:
        return False
    return isinstance(data, dict) and "facts" not in data


def _with_theirs(path: Path, text: str | None, facts: list[Fact]) -> dict[str, Any]:
    """facts.yaml's data with `facts`: the file's other top-level keys (an author's) kept,
    in their order, `facts` in its place among them."""
    if text is None or len(_NOT_AN_ITEM.findall(text)) <= 1:
        return {"facts": facts}        # no line at column 0 but `facts:`: no other key
    try:
        data = read_yaml(path, {})
    except FileFormatError:
        return {"facts": facts}
    if not isinstance(data, dict):
        return {"facts": facts}
    return {key: facts if key == "facts" else value for key, value in
            (data if "facts" in data else {**data, "facts": facts}).items()}


def _facts_of(text: str) -> Any:
    """The `facts` that `text` holds (None when it holds none, or is no YAML)."""
    try:
        data = load_yaml(text)         # aliases bounded
    except yaml.YAMLError:
        return None
    return data.get("facts") if isinstance(data, dict) else None


def give_ids(memory: Memory, kinds: Sequence[str] = LEGACY) -> None:
    """Give every loop and relationship an id that can name its file, unique in its kind
    (those read from the old list files may have none, or one no file can be named):
    the one it has when it can, else one made from it."""
    for kind in kinds:
        items = getattr(memory, kind)
        if all(FILE_ID.match(str(item.get("id", ""))) for item in items) and \
                len({str(item["id"]).lower() for item in items}) == len(items):
            continue
        taken: set[str] = set()
        for item in items:
            _give_id(kind, item, taken)


def _give_id(kind: str, item: dict[str, Any], taken: set[str]) -> None:
    """Keep the item's id if it can name a file and is not taken, else make one; first."""
    wanted = str(item.get("id") or "")
    if not FILE_ID.match(wanted) or wanted.lower() in taken:
        wanted = unique_id(_made_id(kind, item), taken)
    rest = {key: value for key, value in item.items() if key != "id"}
    item.clear()
    item.update({"id": wanted, **rest})
    taken.add(wanted.lower())


def stage_migration(txn: Transaction, memory_dir: Path) -> dict[str, int]:
    """Move the old layout's memory/loops.yaml and relationships.yaml to one file per
    item (memory/loops/<id>.yaml, memory/relationships/<id>.yaml) in `txn`: each item
    written, the old file removed. Returns how many items each kind moved (FileFormatError
    when an old file cannot be read: nothing is staged for it)."""
    moved = {}
    for kind in LEGACY:
        legacy = memory_dir / f"{kind}.yaml"
        if not legacy.is_file():
            continue
        items, there = load_list(legacy, kind), load_folder(memory_dir / kind)
        taken = {item_id.lower() for item_id in there}
        for item in items:
            if str(item.get("id")) not in there:    # else moved before: the file wins
                _give_id(kind, item, taken)
                txn.stage(memory_dir / kind / f"{item['id']}.yaml", dump_yaml(item))
        txn.remove(legacy)
        moved[kind] = len(items)
    return moved


def _made_id(kind: str, item: dict[str, Any]) -> str:
    if kind == "relationships":
        return relationship_id(str(item.get("a", "")), str(item.get("b", "")))
    return slug(item.get("id") or item.get("description") or "loop")[:40]
