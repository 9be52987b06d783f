"""An author's comments kept when the program writes a YAML file over them.

The files an author edits and the program rewrites (outline/outline.yaml,
names.yaml, style.yaml, the memory item files) are made from data, as
`files.dump_yaml` lays it out. `keep_comments(old, new)` is the text to write
in place of `new` over a file that held `old`:

- `new` itself, byte for byte, when `old` holds no comment but those `new` has
  (the program's own header): a file nobody annotated is written as it always
  was, and costs a search for "#" (given `laid_out`, the program's layout, only
  when `old` is also laid out so: an author's layout, quotes or own keys in a
  file without comments are kept as the comments are);
- else `old` with `new`'s values put in, through ruamel.yaml's round trip
  (yaml_merge.py: a value changed is replaced where it stands, its quotes or
  block style kept; a key new to the file goes after the key it follows in
  `new`; a key gone is taken out; a list's items are matched one to one, so
  each keeps its comments), the file's key order, its indentation and every
  comment of the author's kept. Here the comments are found (from PyYAML's
  tokens: a '#' outside every token) and put back: a comment line (or a blank
  line) belongs to the key or item below it, an end-of-line comment to its
  line, the comments at the top and at the end of the file to the top and the
  end; those of a part the program took out stay where it was, above what
  follows it.

The text made is read back (PyYAML, as the project reads every file) and given
only when it reads as `new` reads; else, and for a file with anchors or aliases,
`new` is given. Reading is not changed: this module only writes.
"""

from __future__ import annotations

import bisect
import math
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

import yaml

from novel_agent.errors import FileFormatError
from novel_agent.files import compose_yaml, load_yaml, read_bytes
from novel_agent.yaml_merge import Place, Unkept, merged, same_value

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_WS = " \t\r"                                       # what YAML takes for white space
_HASH = re.compile(r"(?:^|(?<=[ \t]))#", re.M)      # where a comment may begin
_HEADER = re.compile(r"[|>][-+1-9]*")                # a block scalar's header


def text_of(path: Path | str) -> str | None:
    """The text a file holds now, to write over (None when there is none, or it is no
    UTF-8 text: nothing to keep)."""
    try:
        return read_bytes(path).decode("utf-8")
    except (OSError, UnicodeDecodeError, FileFormatError):
        return None


def keep_comments(old: str | None, new: str, *, width: float = 100,
                  laid_out: Callable[..., str] | None = None) -> str:
    """The text to write over a file that held `old` (None: no file) for the data `new`
    holds: `new` unless `old` has comments of the author's, else `old` with `new`'s
    values, comments and key order kept (see the module docstring). `width`: the
    line width `new` was laid out with (math.inf: never folded). `laid_out`: how the
    program lays data out (files.dump_yaml, called with the data and `width`): an `old`
    it did not lay out so (an author's quotes, flow lists, own keys) is kept as its
    author laid it out too, comments or none: a line whose value is not changed keeps
    its bytes."""
    if old is None or "#" not in old and laid_out is None:
        return new
    try:
        spans = _spans(old)
        theirs = {c.text.strip() for c in _comments(old, spans)}
        if not theirs - ({c.text.strip() for c in _comments(new, _spans(new))}
                         if "#" in new else set()) and \
                (laid_out is None or _as_laid_out(old, laid_out, width)):
            return new
        if load_yaml(old) == load_yaml(new):
            return old          # the same values: the file as its author left it
        return _round_trip(old, spans, new, width)
    except Exception:   # Unkept, PyYAML's or ruamel's errors, or any other: the new
        return new      # text is right, if without the notes (a tick must not fail here)


def _as_laid_out(old: str, laid_out: Callable[..., str], width: float) -> bool:
    """Whether `old` is as `laid_out` lays out its own data (read after _spans: no aliases)."""
    return laid_out(load_yaml(old), width=width) == old


def author_comments(old: str, new: str = "") -> list[str]:
    """The comments of `old` that `new` has not (the program's own), stripped, in order:
    what keep_comments keeps."""
    if "#" not in old:
        return []
    mine = {c.text.strip() for c in _comments(new, _spans(new))} if "#" in new else set()
    return [c.text.strip() for c in _comments(old, _spans(old)) if c.text.strip() not in mine]


# -- where the comments are ----------------------------------------------------------------


@dataclass(frozen=True)
class _Comment:
    line: int         # 0-based
    column: int
    text: str         # from the '#' to the end of the line
    alone: bool       # the only thing on its line (else after a value: end of line)
    gap: int = 1      # the spaces before it
    indent: int = 0   # the spaces its line begins with
    aligned: bool = False    # at the column of another end-of-line comment (kept there)


def _spans(text: str) -> list[tuple[int, int]]:
    """The (start, end) offsets of every token of `text`: what is not comment. A file with
    an anchor or an alias is not kept (its structure is shared: Unkept)."""
    spans = []
    for token in yaml.scan(text, Loader=_Loader):
        if isinstance(token, (yaml.AnchorToken, yaml.AliasToken, yaml.DirectiveToken)):
            raise Unkept("anchors, aliases or directives")
        start, end = token.start_mark.index, token.end_mark.index
        header = _HEADER.match(text, start) if getattr(token, "style", None) in ("|", ">") \
            else None
        if header is not None:     # a block scalar: what follows "|-" on its line is not it
            spans.append((start, header.end()))
            start = text.find("\n", start) + 1 or end
        if end > start:
            spans.append((start, end))
    return spans


def _covered(spans: list[tuple[int, int]], at: int) -> bool:
    found = bisect.bisect_right(spans, (at, math.inf)) - 1
    return found >= 0 and spans[found][0] <= at < spans[found][1]


def _comments(text: str, spans: list[tuple[int, int]]) -> list[_Comment]:
    """Every comment of `text` (from a '#' outside every token, at a line's start or after
    a space, to the end of the line), in order."""
    out: list[_Comment] = []
    end = -1
    for match in _HASH.finditer(text):
        at = match.start()
        if at < end or _covered(spans, at):
            continue
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at)
        end = len(text) if end < 0 else end
        before = text[start:at]
        out.append(_Comment(text.count("\n", 0, at), at - start, text[at:end].rstrip(_WS),
                            not before.strip(_WS), len(before) - len(before.rstrip(_WS)),
                            len(before) - len(before.lstrip(_WS))))
    return out


def _blank_lines(text: str, spans: list[tuple[int, int]]) -> list[int]:
    """The lines of `text` that hold nothing, outside a block scalar."""
    out, at = [], 0
    for number, line in enumerate(text.split("\n")):
        if not line.strip(_WS) and not _covered(spans, at) and at < len(text):
            out.append(number)
        at += len(line) + 1
    return out


@dataclass
class _Entry:
    """A key of a mapping or an item of a list, as the text lays it out."""

    path: Place
    line: int                       # where it starts (its key's line, its item's)
    column: int
    ends: list[tuple[int, int, str]] = field(default_factory=list)   # (line, column, role)


def _entries(node: yaml.Node) -> list[_Entry]:
    """Every entry of a composed document in document order (a flow collection is one
    value: its items are not entries)."""
    out: list[_Entry] = []

    def walk(node: yaml.Node, path: Place) -> None:
        if getattr(node, "flow_style", False):
            return
        if isinstance(node, yaml.MappingNode):
            for place, (key, value) in enumerate(node.value):
                entry = _Entry((*path, place), key.start_mark.line, key.start_mark.column,
                               [(key.end_mark.line, key.end_mark.column, "key")])
                _value_end(entry, value)
                out.append(entry)
                walk(value, entry.path)
        elif isinstance(node, yaml.SequenceNode):
            for place, item in enumerate(node.value):
                entry = _Entry((*path, place), item.start_mark.line, item.start_mark.column)
                _value_end(entry, item)
                out.append(entry)
                walk(item, entry.path)

    walk(node, ())
    return out


def _value_end(entry: _Entry, value: yaml.Node) -> None:
    if isinstance(value, yaml.ScalarNode) or getattr(value, "flow_style", False):
        entry.ends.append((value.end_mark.line, value.end_mark.column, "value"))


@dataclass
class _Notes:
    """The comments and blank lines of a text, each given to what it belongs to."""

    head: list[str] = field(default_factory=list)          # above the first entry
    tail: list[str] = field(default_factory=list)          # after the last
    above: dict[Place, list[str]] = field(default_factory=dict)    # lines above an entry
    after: dict[tuple[Place, str], list[_Comment]] = field(default_factory=dict)   # end of line


def _notes(text: str, entries: list[_Entry], spans: list[tuple[int, int]]) -> _Notes:
    notes = _Notes()
    lines = text.split("\n")
    starts = sorted((e.line, len(e.path), n) for n, e in enumerate(entries))
    first = starts[0][0] if starts else len(lines)
    ends: dict[int, tuple[int, Place, str]] = {}     # line -> its last value's end, owner
    for entry in entries:
        for number, column, role in entry.ends:
            if column > ends.get(number, (-1, (), ""))[0]:
                ends[number] = (column, entry.path, role)
    comments = _comments(text, spans)
    alone = {c.line: c for c in comments if c.alone}
    columns = Counter(c.column for c in comments if not c.alone)
    stray = []
    for comment in comments:
        if comment.alone:
            continue
        comment = replace(comment, aligned=columns[comment.column] > 1)
        owner = ends.get(comment.line)
        if owner is not None and owner[0] <= comment.column:
            notes.after.setdefault((owner[1], owner[2]), []).append(comment)
        else:                       # after no value of its line: a line of its own
            stray.append(comment.line)
            alone[comment.line] = replace(comment, alone=True)
    for number in sorted({*alone, *_blank_lines(text, spans)}):
        said = alone.get(number)
        line = (" " * said.indent + said.text) if said is not None and said.line in stray \
            else lines[number].rstrip(_WS) if said is not None else ""
        if number < first:
            notes.head.append(line)
            continue
        at = bisect.bisect_right(starts, (number, math.inf, 0))
        if at == len(starts):
            notes.tail.append(line)
        else:
            notes.above.setdefault(entries[starts[at][2]].path, []).append(line)
    while notes.tail and not notes.tail[-1]:      # the text's last line break
        notes.tail.pop()
    return notes


# -- the text written ---------------------------------------------------------------------


def _round_trip(old: str, spans: list[tuple[int, int]], new: str, width: float) -> str:
    """`old` with `new`'s values put in and its notes kept (`spans`: old's tokens)."""
    node = compose_yaml(old)
    data = load_yaml(new)
    if node is None or not isinstance(data, (dict, list)):
        raise Unkept("not a mapping or a list")
    entries = _entries(node)
    notes = _notes(old, entries, spans)
    text, moved = merged(old, node, data, width)
    written = _written(text, notes, entries, moved)
    if not same_value(load_yaml(written), data):
        raise Unkept("would not read back as the new text")
    return written


def _written(text: str, notes: _Notes, entries: list[_Entry], moved: dict[Place, Place]) -> str:
    """`text` (ruamel's, without comments) with `notes` (the old text's) put back beside
    the entries they belong to (`moved`: an old entry's path -> its path in `text`)."""
    node = compose_yaml(text)
    spans = _spans(text)
    now = {e.path: e for e in _entries(node)} if node is not None else {}
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    above: dict[int, list[str]] = {}
    after: dict[int, list[_Comment]] = {}
    waiting: list[str] = []          # lines of entries taken out, for the next that stays
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    for entry in entries:
        lines_above = notes.above.get(entry.path, [])
        target = now.get(moved[entry.path]) if entry.path in moved else None
        gone = [comment for role in ("key", "value")
                for comment in notes.after.get((entry.path, role), [])]
        if target is None:
            waiting += [*lines_above, *(" " * c.indent + c.text for c in gone)]
            continue
        shift = target.column - entry.column
        above.setdefault(target.line, []).extend(
            _shifted(line, shift) for line in [*waiting, *lines_above])
        waiting = []
        for role in ("key", "value"):
            said = notes.after.get((entry.path, role), [])
            if not said:
                continue
            end = next((e for e in target.ends if e[2] == role), None) or \
                next(iter(target.ends), None)
            if end is not None and end[0] < len(lines) and \
                    not _covered(spans, offsets[end[0] + 1] - 1):
                after.setdefault(end[0], []).extend(said)
            else:                      # its line goes on in a value: a line of its own
                above.setdefault(target.line, []).extend(
                    _shifted(" " * c.indent + c.text, shift) for c in said)
    out = list(notes.head)
    for number, line in enumerate(lines):
        out += above.get(number, [])
        for comment in after.get(number, []):
            line = line.rstrip(_WS)
            line += " " * (comment.column - len(line) if comment.aligned and
                           len(line) < comment.column else max(1, comment.gap)) + comment.text
        out.append(line)
    out += waiting + notes.tail
    return "\n".join(out) + "\n"


def _shifted(line: str, shift: int) -> str:
    """A comment line moved `shift` columns with its entry (a blank line stays blank)."""
    if not line.strip() or shift == 0:
        return line
    indent = len(line) - len(line.lstrip(" "))
    return " " * max(0, indent + shift) + line.lstrip(" ")


def walk_comments(text: str) -> Iterator[tuple[int, str]]:
    """(line, comment) for every comment of `text`, lines counted from 1."""
    for comment in _comments(text, _spans(text)):
        yield comment.line + 1, comment.text
