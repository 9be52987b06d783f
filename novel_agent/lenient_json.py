"""Reading JSON out of what a model answered: fences, prose around it, cut-off objects.

`parse_json` accepts what models really send (code fences, prose around the
object, trailing commas, an object cut off by the token limit, which
`close_truncated` closes after its last complete value) and raises
ModelResponseError when there is no object at all.
"""

from __future__ import annotations

import json
import re
from typing import Any

from novel_agent.errors import ModelResponseError

FENCE_RE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.S)


class _Scan:
    """One pass over a JSON object's text, remembering the last place it could be cut:
    just after a complete value, with the brackets still open there."""

    def __init__(self, text: str, start: int):
        self.text, self.start = text, start
        self.stack: list[str] = []
        self.in_str = self.escaped = self.after_colon = False
        self.cut: int | None = None
        self.cut_stack: list[str] = []

    def mark(self, at: int) -> None:
        """A complete value ends just before `at`."""
        self.cut, self.cut_stack = at, list(self.stack)

    def string_char(self, ch: str, i: int) -> None:
        if self.escaped:
            self.escaped = False
        elif ch == "\\":
            self.escaped = True
        elif ch == '"':
            self.in_str = False
            # a string ends a value in an array, or a value after a colon (not a key)
            if self.stack and (self.stack[-1] == "[" or self.after_colon):
                self.mark(i + 1)
                self.after_colon = False

    def scalar(self, i: int) -> None:
        """A number, true, false or null: complete once a delimiter follows it."""
        if not (self.after_colon or (self.stack and self.stack[-1] == "[")):
            return
        j = i
        while j < len(self.text) and self.text[j] not in ",}]\n":
            j += 1
        if j < len(self.text):
            self.mark(j)

    def run(self) -> str | None:
        """The balanced object, else the text up to the last cut closed with its
        brackets, else None."""
        for i in range(self.start, len(self.text)):
            ch = self.text[i]
            if self.in_str:
                self.string_char(ch, i)
            elif ch == '"':
                self.in_str = True
            elif ch in "{[":
                self.stack.append(ch)
                self.after_colon = False
            elif ch in "}]":
                if not self.stack:
                    break
                self.stack.pop()
                self.mark(i + 1)
                if not self.stack:
                    return self.text[self.start:i + 1]
            elif ch in ":,":
                self.after_colon = ch == ":"
            elif ch.isdigit() or ch in "tfn-":
                self.scalar(i)
        return self.closed()

    def closed(self) -> str | None:
        if self.cut is None or not self.cut_stack:
            return None
        closers = "".join("}" if b == "{" else "]" for b in reversed(self.cut_stack))
        return re.sub(r",\s*$", "", self.text[self.start:self.cut]) + closers


def close_truncated(text: str) -> str | None:
    """The first JSON object in `text`; if it was cut off mid-answer (finish_reason
    "length"), closed after its last complete value by appending the brackets still
    open. None if there is no object to close.
    """
    start = text.find("{")
    return None if start == -1 else _Scan(text, start).run()


def parse_json(text: str, *, stage: str = "") -> dict[str, Any]:
    """Parse a model's JSON answer tolerantly; ModelResponseError if there is none.

    Accepts code fences, prose around the object, trailing commas, and an
    object cut off by the token limit (closed after its last complete value).
    """
    candidates = [text.strip()]
    candidates += [m.strip() for m in FENCE_RE.findall(text)]
    outer = close_truncated(text)   # the first object, balanced or closed
    if outer:
        candidates.append(outer)
    for candidate in candidates:
        for variant in (candidate, re.sub(r",\s*([}\]])", r"\1", candidate)):
            try:
                data = json.loads(variant)
            except (json.JSONDecodeError, ValueError):
                continue
            if isinstance(data, dict):
                return data
    snippet = " ".join(text.split())[:80]
    raise ModelResponseError(f"{stage or 'model'} answer is not a JSON object: {snippet!r}",
                             stage=stage, raw=text)
