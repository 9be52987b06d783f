"""The author's edits of the outline: the whole file (`novel outline edit`) or one part of
it (the Outline page of `novel serve`), each checked whole as the file is read
(story/outline/file.parse_outline) before anything is written, then an entry of the history.

    save_outline_text(project, text) -> Outline      the file's new text, checked, saved
    edit_part(project, address, values, was) -> Outline   one part's fields changed

A part is named by its address: "arc", "act:N" (the Nth act), "chapter:N" (chapter N
of the book) or "beat:ID" ("beat:3.2"). Its fields are the file's: the arc's summary
and ending, an act's name and summary, a chapter's title, purpose and scenes, a beat's
what and tension (empty: the curve's). A part marked `locked: true`, or under one that
is (an act holds its chapters, a chapter its beats), is not edited part by part: the
author unlocks it in the file. A part changed in the file since the values the editor
started from (`was`, `fingerprint`) is not written over. The new text is the file's
with the part's new values put in (story/outline/file.outline_text: the author's comments,
key order and layout kept), then saved exactly as an edit of the whole file is. The
caller holds the project's lock.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any

from novel_agent.errors import OutlineError, ProjectError
from novel_agent.files import atomic_write, read_text
from novel_agent.history.hooks import after_outline
from novel_agent.story.outline.file import Outline, outline_text, parse_outline, to_data
from novel_agent.story.project.folder import Project

FIELDS = {"arc": ("summary", "ending"), "act": ("name", "summary"),
          "chapter": ("title", "purpose", "scenes"), "beat": ("what", "tension")}
ORDER = {"arc": ("question", "summary", "ending", "locked"),
         "act": ("name", "summary", "locked", "chapters"),
         "chapter": ("number", "title", "purpose", "scenes", "locked", "beats"),
         "beat": ("id", "what", "tension", "locked")}      # as to_data lays them out
NUMBERS = {"scenes", "tension"}          # fields the file holds as whole numbers
WHOLE = re.compile(r"^[+-]?\d+$")


def save_outline_text(project: Project, text: str) -> Outline:
    """Write `text` as the project's outline once it reads as one (else the OutlineError
    naming the line and the key, and the file stays), as an entry of the history."""
    outline = parse_outline(text, str(project.outline_file))
    atomic_write(project.outline_file, text)
    after_outline(project, "outline edited")
    return outline


def no_outline(project: Project) -> ProjectError:
    """The error of a project without an outline, saying how to make one."""
    return ProjectError(f"{project.name} has no outline yet: make one with `novel outline -p "
                        f"{project.name}`", path=str(project.outline_file))


def part_data(data: dict[str, Any], address: str) -> tuple[dict[str, Any], list[str]]:
    """The mapping of `data` (to_data's) that `address` names, and the names of it and of
    the parts holding it that are locked ("chapter 3", "act 2"): a KeyError for an
    address the outline has not."""
    kind, _, name = address.partition(":")
    if kind == "arc" and not name:
        return data["arc"], ["the arc"] if data["arc"].get("locked") else []
    for n, act in enumerate(data["acts"], 1):
        held = [f"act {n}"] if act.get("locked") else []
        if kind == "act" and name == str(n):
            return act, held
        for chapter in act["chapters"]:
            inner = (held + [f"chapter {chapter['number']}"]) if chapter.get("locked") else held
            if kind == "chapter" and name == str(chapter["number"]):
                return chapter, inner
            for beat in chapter["beats"]:
                if kind == "beat" and name == beat["id"]:
                    return beat, inner + ([f"beat {beat['id']}"] if beat.get("locked") else [])
    raise KeyError(address)


def describe(address: str) -> str:
    """"chapter 3", "beat 3.2", "the arc"."""
    kind, _, name = address.partition(":")
    return "the arc" if kind == "arc" else f"{kind} {name}"


def fingerprint(values: Mapping[str, Any]) -> str:
    """A short digest of a part's fields as shown to be edited: the form carries it back,
    so a part changed in the file meanwhile is not written over."""
    shown = {k: "" if v is None else str(v) for k, v in values.items()}
    return hashlib.sha256(json.dumps(shown, sort_keys=True).encode()).hexdigest()[:16]


def part_values(outline: Outline, address: str) -> dict[str, Any]:
    """The editable fields of part `address` of `outline`, as the file holds them (a beat's
    tension None: the curve's)."""
    part, _ = part_data(to_data(outline), address)
    return {key: part.get(key) for key in FIELDS[address.partition(":")[0]]}


def edit_part(project: Project, address: str, values: Mapping[str, str],
              was: str | None = None) -> Outline | None:
    """Change the fields of part `address` to `values` (text as typed; a number's field
    as digits; an empty tension is the curve's) and save the outline as
    `save_outline_text` does; the outline saved, or None when the values were the
    part's already (nothing written). Refused, with one line and nothing written: no outline, no
    such part, a locked part, a part changed since `was`, or an outline the change makes
    invalid (the OutlineError of `novel outline edit`, naming the part and the key)."""
    path = project.outline_file
    try:
        text = read_text(path)
    except FileNotFoundError:
        raise no_outline(project) from None
    outline = parse_outline(text, str(path))
    kind = address.partition(":")[0]
    if kind not in FIELDS:
        raise OutlineError(f"no part {address!r} to edit: a part is arc, act:N, chapter:N or "
                           "beat:ID", file=str(path))
    data = to_data(outline)
    try:
        part, locked = part_data(data, address)
    except KeyError:
        raise OutlineError(f"the outline has no {describe(address)} to edit",
                           file=str(path)) from None
    if locked:
        raise OutlineError(f"{describe(address)} is locked (locked: true on {locked[-1]}): "
                           "unlock it in the file to edit it", file=str(path), key="locked")
    if was is not None and was != fingerprint(part_values(outline, address)):
        raise OutlineError(f"{describe(address)} changed in the file since this page was made: "
                           "reload the page to see it", file=str(path))
    edited = dict(part)
    for key in FIELDS[kind]:
        typed = " ".join(str(values.get(key) or "").split())
        edited.pop(key, None)
        if typed or key not in NUMBERS:
            edited[key] = int(typed) if key in NUMBERS and WHOLE.match(typed) else typed
    if edited == part:
        return None
    part.clear()
    part.update({key: edited[key] for key in ORDER[kind] if key in edited})
    try:
        return save_outline_text(project, outline_text(data, text))
    except OutlineError as exc:      # its line is the new text's, not the file's
        said = str(exc).removeprefix(f"{exc.file}:{exc.line}: ")
        raise OutlineError(said, file=str(path), key=exc.key) from None
