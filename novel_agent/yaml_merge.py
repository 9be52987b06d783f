"""New values put into ruamel.yaml's document of a YAML file's old text.

yaml_comments.keep_comments writes a file an author annotated as its old text with
the new values put in. `merged(old, node, data, width)` does the putting in:
ruamel.yaml loads the old text (keeping its key order, quotes, block and flow
styles), `Merge` puts `data` into it (a value changed is replaced where it stands,
a key new to it goes after the key it follows in `data`, a key gone is taken out,
a list's items are matched by id, number or name, else by value, else paired in
order) and says where each old entry went, and the document is dumped without
ruamel's comments (yaml_comments puts the author's back as lines), at the old
text's indentation, as PyYAML would write its values: YAML 1.1 (yes, no, on and
off are booleans), null as null, single quotes where they do, floats as repr.
`same_value` compares values as YAML holds them.
"""

from __future__ import annotations

import difflib
import io
import math
import warnings
from datetime import date, datetime
from typing import Any

import yaml
from ruamel.yaml import YAML
from ruamel.yaml.comments import Comment, CommentedBase, CommentedMap, CommentedSeq
from ruamel.yaml.emitter import Emitter
from ruamel.yaml.error import MantissaNoDotYAML1_1Warning
from ruamel.yaml.representer import RoundTripRepresenter
from ruamel.yaml.scalarstring import (
    DoubleQuotedScalarString,
    FoldedScalarString,
    LiteralScalarString,
    SingleQuotedScalarString,
)

IDENTITY = ("id", "number", "name")       # what tells a list's mappings apart
Place = tuple[int, ...]                   # an entry: its place (key or item) at each level
# ruamel warns on stderr of each `1e5` it reads as a YAML 1.1 float; PyYAML reads a text
warnings.filterwarnings("ignore", category=MantissaNoDotYAML1_1Warning)


class Unkept(Exception):
    """The round trip cannot keep this file as it is: write the new text."""


def merged(old: str, node: yaml.Node, data: Any, width: float) -> tuple[str, dict[Place, Place]]:
    """`old` (PyYAML's composed `node` of it) with `data` put in, dumped without comments,
    lines folded past `width` (math.inf: never); and where each old entry that stays is
    in it (Merge.moved)."""
    yml = YAML()
    yml.Representer = _Representer
    yml.Emitter = _Emitter
    yml.preserve_quotes = True
    yml.version = (1, 1)           # as PyYAML reads: yes, no, on, off are booleans
    yml.width = 10**9 if math.isinf(width) else int(width)
    yml.indent(*_indents(node))
    doc = yml.load(old)
    _sizes(node, doc)
    merge = Merge()
    doc = merge.value(doc, data, (), ())
    _bare(doc)
    out = io.StringIO()
    yml.dump(doc, out)
    text = out.getvalue()
    return (text[text.index("---\n") + 4:] if text.startswith("%YAML") else text), merge.moved


def _sizes(node: yaml.Node, data: Any, path: Place = ()) -> None:
    """Check that the composed document and ruamel's hold the same entries (a key given
    twice would make them differ)."""
    if isinstance(node, yaml.MappingNode):
        if not isinstance(data, dict) or len(data) != len(node.value):
            raise Unkept(f"mapping at {path}")
        for place, ((_, value), item) in enumerate(zip(node.value, data.values())):
            _sizes(value, item, (*path, place))
    elif isinstance(node, yaml.SequenceNode):
        if not isinstance(data, list) or len(data) != len(node.value):
            raise Unkept(f"list at {path}")
        for place, (value, item) in enumerate(zip(node.value, data)):
            _sizes(value, item, (*path, place))


class _Representer(RoundTripRepresenter):
    """ruamel's round-trip representer writing None as PyYAML does ("null", not "")."""

    def represent_none(self, data: Any) -> Any:
        return self.represent_scalar("tag:yaml.org,2002:null", "null")


_Representer.add_representer(type(None), _Representer.represent_none)


class _Emitter(Emitter):
    """ruamel's emitter quoting a value as PyYAML does: in single quotes when it can be
    (ruamel prefers double quotes for a text with an apostrophe or a line break)."""

    def choose_scalar_style(self) -> Any:
        style = super().choose_scalar_style()
        if style == '"' and not self.event.style and not self.canonical and \
                self.analysis.allow_single_quoted and \
                not (self.simple_key_context and self.analysis.multiline):
            return "'"
        return style


_STYLES = (LiteralScalarString, FoldedScalarString, SingleQuotedScalarString,
           DoubleQuotedScalarString)


def same_value(a: Any, b: Any) -> bool:
    """Equal as YAML values: a bool is no number, 1.0 is no 1, the order of keys aside."""
    if isinstance(a, dict) or isinstance(b, dict):
        return isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys() and \
            all(same_value(a[k], b[k]) for k in a)
    if isinstance(a, list) or isinstance(b, list):
        return isinstance(a, list) and isinstance(b, list) and len(a) == len(b) and \
            all(map(same_value, a, b))
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    for kind in (bool, float, int, str, datetime, date):
        if isinstance(a, kind) or isinstance(b, kind):
            return isinstance(a, kind) and isinstance(b, kind) and bool(a == b)
    return type(a) is type(b) and bool(a == b)


class Merge:
    """`new`'s values put into ruamel's document of the old text; `moved` maps each old
    entry's path that stays to its path in the result."""

    def __init__(self) -> None:
        self.moved: dict[Place, Place] = {}

    def value(self, old: Any, new: Any, was: Place, now: Place) -> Any:
        """`new` put into `old` (found at `was` in the old text, going to `now`): `old`
        itself when it holds `new` already, else changed in place where it can be."""
        if same_value(old, new):
            self._keep(old, was, now)
            return old
        if isinstance(old, CommentedMap) and isinstance(new, dict):
            return self._mapping(old, new, was, now)
        if isinstance(old, CommentedSeq) and isinstance(new, list):
            return self._list(old, new, was, now)
        if isinstance(old, _STYLES) and isinstance(new, str) and \
                (not isinstance(old, (LiteralScalarString, FoldedScalarString)) or
                 "\n" in new.strip("\n")):
            return type(old)(new)        # the old quotes, or its block style for lines
        return new

    def _keep(self, old: Any, was: Place, now: Place) -> None:
        """An old value kept whole: its entries stay where they were in it."""
        if isinstance(old, dict):
            for place, key in enumerate(old):
                self.moved[(*was, place)] = (*now, place)
                self._keep(old[key], (*was, place), (*now, place))
        elif isinstance(old, list):
            for place, item in enumerate(old):
                self.moved[(*was, place)] = (*now, place)
                self._keep(item, (*was, place), (*now, place))

    def _mapping(self, old: CommentedMap, new: dict[Any, Any], was: Place,
                 now: Place) -> CommentedMap:
        places = {key: place for place, key in enumerate(old)}
        for key in [k for k in old if k not in new]:
            del old[key]
        last = -1
        for key, value in new.items():
            if key in old:
                last = list(old).index(key)
            else:
                last += 1
                old.insert(last, key, value)
        for place, key in enumerate(list(old)):
            if key in places:
                self.moved[(*was, places[key])] = (*now, place)
                old[key] = self.value(old[key], new[key], (*was, places[key]), (*now, place))
        return old

    def _list(self, old: CommentedSeq, new: list[Any], was: Place, now: Place) -> CommentedSeq:
        """Items matched by what tells them apart (_identity); those between two matches
        paired in order when they are lists, or mappings not both with an id (a scalar
        changed, or a mapping of another id, is a new item)."""
        pairs: dict[int, int] = {}
        matcher = difflib.SequenceMatcher(None, list(map(_identity, old)),
                                          list(map(_identity, new)), autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            for i, j in zip(range(i1, i2), range(j1, j2)):
                if tag == "equal" or (tag == "replace" and
                                      _kind(old[i]) == _kind(new[j]) != "scalar" and
                                      not (_kind(old[i]) == "mapping" and "id" in old[i]
                                           and "id" in new[j])):
                    pairs[j] = i
        items = []
        for j, value in enumerate(new):
            if j not in pairs:
                items.append(value)
                continue
            i = pairs[j]
            self.moved[(*was, i)] = (*now, j)
            items.append(self.value(old[i], value, (*was, i), (*now, j)))
        old.clear()
        old.extend(items)
        return old


def _kind(value: Any) -> str:
    return "mapping" if isinstance(value, dict) else "list" if isinstance(value, list) \
        else "scalar"


def _identity(item: Any) -> Any:
    """What an item of a list is matched by: a mapping's id (or number, or name), else
    the whole of it."""
    if isinstance(item, dict):
        for key in IDENTITY:
            if key in item and isinstance(item[key], (str, int)):
                return ("id", key, str(item[key]))
    return ("value", _frozen(item))


def _frozen(value: Any) -> Any:
    if isinstance(value, dict):
        return tuple((str(k), _frozen(v)) for k, v in value.items())
    if isinstance(value, list):
        return tuple(map(_frozen, value))
    return (type(value).__name__ if isinstance(value, (bool, float)) else "", str(value))


def _bare(value: Any) -> None:
    """Take ruamel's comments off (they are put back as lines: _written), and make each
    number with a point a plain float, written as PyYAML writes it (ruamel rewrites the
    digits of some it read)."""
    if isinstance(value, CommentedBase) and hasattr(value, Comment.attrib):
        delattr(value, Comment.attrib)
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, float):
                value[key] = float(item)
            else:
                _bare(item)
    elif isinstance(value, list):
        for place, item in enumerate(value):
            if isinstance(item, float):
                value[place] = float(item)
            else:
                _bare(item)


def _indents(node: yaml.Node) -> tuple[int, int, int]:
    """(mapping, sequence, offset) as ruamel.yaml.indent takes them, from the first nested
    mapping and list of a composed document (PyYAML's 2, 2, 0 when it has none)."""
    mapping = sequence = offset = None

    def walk(node: yaml.Node) -> None:
        nonlocal mapping, sequence, offset
        if not isinstance(node, yaml.MappingNode) or getattr(node, "flow_style", False):
            return
        for key, value in node.value:
            if getattr(value, "flow_style", False) or not value.value:
                continue
            if isinstance(value, yaml.MappingNode) and mapping is None:
                mapping = value.value[0][0].start_mark.column - key.start_mark.column
            if isinstance(value, yaml.SequenceNode) and sequence is None:
                offset = value.start_mark.column - key.start_mark.column
                sequence = value.value[0].start_mark.column - key.start_mark.column
            walk(value)
            if isinstance(value, yaml.SequenceNode):
                for item in value.value:
                    walk(item)

    walk(node)
    sequence = sequence if sequence is not None and sequence >= (offset or 0) + 2 else 2
    offset = offset if offset is not None and 0 <= offset <= sequence - 2 else 0
    return (mapping if mapping is not None and mapping > 0 else 2), sequence, offset
