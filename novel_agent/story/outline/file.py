"""The book's outline: `outline/outline.yaml`, plain YAML the author edits.

    arc:
      question: What the premise leaves open (asked of a small model first; may be left out).
      summary: How the story goes from its premise to its end.
      ending: How it ends.
    acts:
      - name: The Discovery
        summary: What happens in the act.
        chapters:
          - number: 1                # chapters are numbered through the book, from 1
            title: The Drowned Man
            purpose: What the chapter must do for the story.
            scenes: 4                # its target length, in scenes
            beats:
              - id: '1.1'            # stable: chapter 1's first beat (given when left out)
                what: Mara finds the map in the drowned man's coat.
                tension: 3           # its target tension, 0-10 (left out: the curve's)
                locked: true         # `novel outline regen` keeps it

`locked: true` may stand on the arc, an act, a chapter or a beat, and holds
everything under it. `parse_outline` checks every field and raises OutlineError
naming the file, the line and the key; `load_outline` and `save_outline` read
and write the file (atomically, the author's comments and key order kept); the
rest is pure.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml

from novel_agent.errors import OutlineError
from novel_agent.files import (
    atomic_write,
    compose_yaml,
    dump_yaml,
    load_yaml,
    read_text,
    yaml_problem,
)
from novel_agent.yaml_comments import keep_comments, text_of

HEADER = ("# The book's outline: edit it by hand or with `novel outline edit`; `locked: true`\n"
          "# keeps a part (and all under it) when `novel outline regen` rewrites the rest.\n")
BEAT_ID = re.compile(r"^\d+\.\d+$")
MAX_SCENES = 1000      # a chapter's target length, at most


@dataclass(frozen=True)
class Beat:
    """One thing that must happen in a chapter, with its target tension (None: the curve's)."""

    id: str
    what: str
    tension: int | None = None
    locked: bool = False


@dataclass(frozen=True)
class Chapter:
    """A chapter: its number in the book, title, purpose, target length in scenes, beats."""

    number: int
    title: str
    purpose: str = ""
    scenes: int = 1
    beats: tuple[Beat, ...] = ()
    locked: bool = False


@dataclass(frozen=True)
class Act:
    """An act (or part) and its chapters."""

    name: str
    summary: str = ""
    chapters: tuple[Chapter, ...] = ()
    locked: bool = False


@dataclass(frozen=True)
class Arc:
    """The book's arc and its ending (and, when the model was asked it first, the question
    the premise leaves open, which the ending answers)."""

    summary: str
    ending: str
    locked: bool = False
    question: str = ""


@dataclass(frozen=True)
class Outline:
    """The whole outline: the arc, then the acts in order."""

    arc: Arc
    acts: tuple[Act, ...] = ()

    def chapters(self) -> list[Chapter]:
        """Every chapter, in order."""
        return [c for act in self.acts for c in act.chapters]

    def beats(self) -> list[Beat]:
        """Every beat, in order."""
        return [b for c in self.chapters() for b in c.beats]

    def chapter(self, number: int) -> Chapter | None:
        """Chapter `number`, or None."""
        return next((c for c in self.chapters() if c.number == number), None)

    def act_of(self, number: int) -> Act | None:
        """The act chapter `number` is in, or None."""
        return next((a for a in self.acts if any(c.number == number for c in a.chapters)), None)

    def planned_scenes(self) -> int:
        """The book's planned length in scenes: its chapters' target lengths added up."""
        return sum(c.scenes for c in self.chapters())

    def describe(self) -> str:
        """"3 acts, 4 chapters, 8 beats, 8 scenes planned"."""
        return (f"{_count(len(self.acts), 'act')}, {_count(len(self.chapters()), 'chapter')}, "
                f"{_count(len(self.beats()), 'beat')}, {self.planned_scenes()} scenes planned")


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def spread(total: int, parts: int) -> list[int]:
    """`total` chapters over `parts` acts, as evenly as they go, the middle acts taking
    what is left over first (4 over 3: 1, 2, 1)."""
    counts = [total // parts] * parts
    middle = (parts - 1) / 2
    for i in sorted(range(parts), key=lambda i: (abs(i - middle), i))[:total % parts]:
        counts[i] += 1
    return counts


# -- reading -------------------------------------------------------------------------------


def outline_path(root: Path) -> Path:
    """Where a project keeps its outline (Project.outline_file)."""
    return Path(root) / "outline" / "outline.yaml"


def load_outline(path: Path) -> Outline | None:
    """The outline in `path`, checked; None when there is no such file (a book without one)."""
    try:
        text = read_text(path)
    except FileNotFoundError:
        return None
    return parse_outline(text, str(path))


def parse_outline(text: str, source: str) -> Outline:
    """The outline `text` holds (`source` names it in errors), every field checked: an
    OutlineError names the file, the line and the key of the first problem."""
    try:
        node = compose_yaml(text)
        data = load_yaml(text)
    except yaml.YAMLError as exc:
        message, line = yaml_problem(exc)
        raise OutlineError(message, file=source, line=line) from None
    if data is None:
        raise OutlineError("the outline is empty: it needs 'arc' and 'acts'", file=source, line=1,
                           key="arc")
    top = _Fields(data, node, source, "", ("arc", "acts"), line=1)
    arc = _arc(top.mapping("arc", ("question", "summary", "ending", "locked")))
    acts: list[tuple[Act, list[_Draft]]] = []
    number = 0
    for fields in top.mappings("acts", ("name", "summary", "chapters", "locked")):
        drafts = []
        for chapter in fields.mappings("chapters", CHAPTER_KEYS, first=number + 1):
            number += 1
            drafts.append(_chapter(chapter, number))
        acts.append((Act(fields.text("name"), fields.text("summary", required=False), (),
                         fields.locked()), drafts))
    ids = _beat_ids([d for _, drafts in acts for d in drafts])
    return Outline(arc, tuple(replace(act, chapters=tuple(
        replace(d.chapter, beats=tuple(replace(beat, id=ids[id(f)]) for f, _, beat in d.beats))
        for d in drafts)) for act, drafts in acts))


class _Fields:
    """One mapping of the file: its values by key, each key's line, and where it is
    ("act 2, chapter 5") for errors."""

    def __init__(self, value: Any, node: Any, source: str, where: str,
                 allowed: Sequence[str], line: int):
        self.source, self.where, self.line = source, where, line
        if not isinstance(value, dict) or not isinstance(node, yaml.MappingNode):
            raise self.fail(None, f"must be a mapping ({', '.join(allowed)}), not {value!r}"[:160])
        self.value = value
        self.lines: dict[str, int] = {}
        self.nodes: dict[str, Any] = {}
        for key_node, value_node in node.value:
            key = str(key_node.value)
            at = key_node.start_mark.line + 1
            if key in self.lines:
                raise self.fail(key, f"is given twice (first on line {self.lines[key]}): keep one",
                                at)
            if key not in allowed:
                raise self.fail(key, f"is not a key here (keys: {', '.join(allowed)})", at)
            self.lines[key], self.nodes[key] = at, value_node

    def fail(self, key: str | None, problem: str, line: int | None = None) -> OutlineError:
        """An error at `key` (or this mapping, when None)."""
        said = f"'{key}' {problem}" if key else problem
        return OutlineError(f"{self.where}: {said}" if self.where else said, file=self.source,
                            line=line or (self.lines.get(key, self.line) if key else self.line),
                            key=key or self.where.split(", ")[-1] or None)

    def text(self, key: str, *, required: bool = True) -> str:
        value = self.value.get(key)
        if value is None and not required:
            return ""
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            value = str(value)
        if not isinstance(value, str) or (required and not value.strip()):
            raise self.fail(key, "must be text (quote it)" if key in self.value
                            else "is missing: it must be text")
        return " ".join(value.split())

    def whole(self, key: str, low: int, high: int, *, required: bool = True) -> int | None:
        value = self.value.get(key)
        if value is None and not required:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            said = f", not {value!r}" if key in self.value else " (it is missing)"
            raise self.fail(key, f"must be a whole number from {low} to {high}{said}")
        return value

    def locked(self) -> bool:
        value = self.value.get("locked", False)
        if not isinstance(value, bool):
            raise self.fail("locked", f"must be true or false, not {value!r}")
        return value

    def raw(self, key: str) -> str | None:
        """A scalar as it is written (`id: 3.10` is "3.10", not the number 3.1)."""
        node = self.nodes.get(key)
        if node is None or self.value.get(key) is None:
            return None
        if not isinstance(node, yaml.ScalarNode):
            raise self.fail(key, "must be text like '3.2'")
        return str(node.value).strip()

    def mapping(self, key: str, allowed: Sequence[str]) -> _Fields:
        if key not in self.value:
            raise self.fail(key, "is missing")
        return _Fields(self.value[key], self.nodes[key], self.source,
                       ", ".join(filter(None, [self.where, key])), allowed, self.lines[key])

    def mappings(self, key: str, allowed: Sequence[str], *, required: bool = True,
                 first: int = 1) -> Iterator[_Fields]:
        """The mappings of the list at `key`, each named in errors by the key and its number
        (from `first`): "chapter 3"."""
        value, node = self.value.get(key), self.nodes.get(key)
        if value is None and not required:
            return
        if not isinstance(value, list) or not isinstance(node, yaml.SequenceNode) or \
                (required and not value):
            raise self.fail(key, "must be a list with at least one entry" if key in self.value
                            else "is missing: it must be a list")
        label = key.rstrip("s")
        for number, (item, item_node) in enumerate(zip(value, node.value), first):
            yield _Fields(item, item_node, self.source,
                          ", ".join(filter(None, [self.where, f"{label} {number}"])), allowed,
                          item_node.start_mark.line + 1)


def _arc(fields: _Fields) -> Arc:
    return Arc(fields.text("summary"), fields.text("ending"), fields.locked(),
               fields.text("question", required=False))


CHAPTER_KEYS = ("number", "title", "purpose", "scenes", "beats", "locked")
BEAT_KEYS = ("id", "what", "tension", "locked")


@dataclass(frozen=True)
class _Draft:
    """A chapter as read, its beats before they have their ids."""

    chapter: Chapter
    beats: tuple[tuple[_Fields, str | None, Beat], ...]


def _chapter(fields: _Fields, number: int) -> _Draft:
    """Chapter `number` (a `number` given must be its place in the book)."""
    given = fields.whole("number", 1, 100_000, required=False)
    if given is not None and given != number:
        raise fields.fail("number", f"is {given}, but this is chapter {number}: chapters are "
                                    "numbered in order through the book, from 1")
    chapter = Chapter(number, fields.text("title"), fields.text("purpose", required=False),
                      fields.whole("scenes", 1, MAX_SCENES) or 1, (), fields.locked())
    beats = tuple((b, b.raw("id"), Beat("", b.text("what"),
                                        b.whole("tension", 0, 10, required=False), b.locked()))
                  for b in fields.mappings("beats", BEAT_KEYS, required=False))
    return _Draft(chapter, beats)


def _beat_ids(drafts: list[_Draft]) -> dict[int, str]:
    """Each beat's id, by the id() of its fields: the one given (checked: N.M, once in the
    book), else its chapter's number and its place ("3.2"), or the next number free in
    that chapter."""
    lines: dict[str, int] = {}
    for draft in drafts:
        for fields, given, _ in draft.beats:
            if given is None:
                continue
            if not BEAT_ID.match(given):
                raise fields.fail("id", f"must be a chapter and a beat number, like '3.2', not "
                                        f"{given!r}")
            if given in lines:
                raise fields.fail("id", f"'{given}' is also the id of the beat on line "
                                        f"{lines[given]}: each id is given once in the book")
            lines[given] = fields.lines["id"]
    taken, ids = set(lines), {}
    for draft in drafts:
        for place, (fields, given, _) in enumerate(draft.beats, 1):
            ids[id(fields)] = given or free_id(draft.chapter.number, place, taken)
    return ids


def free_id(chapter: int, place: int, taken: set[str]) -> str:
    """"{chapter}.{place}", or the next number after it free in that chapter; marked taken."""
    k = place
    while f"{chapter}.{k}" in taken:
        k += 1
    taken.add(f"{chapter}.{k}")
    return f"{chapter}.{k}"


# -- writing -------------------------------------------------------------------------------


def to_data(outline: Outline) -> dict[str, Any]:
    """The outline as the file holds it (a `locked` false and a tension None left out)."""
    def lock(part: Any) -> dict[str, bool]:
        return {"locked": True} if part.locked else {}

    def beat(b: Beat) -> dict[str, Any]:
        return {"id": b.id, "what": b.what,
                **({"tension": b.tension} if b.tension is not None else {}), **lock(b)}

    def chapter(c: Chapter) -> dict[str, Any]:
        return {"number": c.number, "title": c.title, "purpose": c.purpose, "scenes": c.scenes,
                **lock(c), "beats": [beat(b) for b in c.beats]}

    asked = {"question": outline.arc.question} if outline.arc.question else {}
    return {"arc": {**asked, "summary": outline.arc.summary, "ending": outline.arc.ending,
                    **lock(outline.arc)},
            "acts": [{"name": a.name, "summary": a.summary, **lock(a),
                      "chapters": [chapter(c) for c in a.chapters]} for a in outline.acts]}


def render_outline(outline: Outline, was: str | None = None) -> str:
    """The file's text: a comment saying how to edit it, then the outline (over `was`,
    the text the file holds: see outline_text)."""
    return outline_text(to_data(outline), was)


def outline_text(data: dict[str, Any], was: str | None = None) -> str:
    """The file's text for the outline's data as `to_data` gives it (checked by no one:
    parse_outline reads it back). Over `was`, the text the file holds, the author's
    comments, key order and layout are kept (yaml_comments.keep_comments)."""
    text = HEADER + dump_yaml(data, width=math.inf)   # a line per sentence, unfolded
    return keep_comments(was, text, width=math.inf)


def save_outline(path: Path, outline: Outline, *, fresh: bool = False) -> None:
    """Write the outline to `path` atomically (its folder made when missing), after checking
    that it reads back as itself: a file this writes always loads. The comments an author
    wrote in the file are kept, unless `fresh` (a new outline in place of the old one)."""
    text = render_outline(outline, None if fresh else text_of(path))
    if parse_outline(text, str(path)) != outline:
        raise OutlineError("the outline would not read back as written (a beat's id given "
                           "twice?)", file=str(path))
    atomic_write(path, text)
