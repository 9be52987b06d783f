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

from .errors import ModelResponseError

FENCE_RE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.S)


def close_truncated(text: str) -> str | None:
    """The first JSON object in `text`; if it was cut off mid-answer (finish_reason
    "length"), closed after its last complete value by appending the brackets still
    open. None if there is no object to close.
    """
    start = text.find("{")
    if start == -1:
        return None
    stack: list[str] = []
    in_str = esc = False
    cut, cut_stack = None, None
    expecting_value_after_colon = False
    for i in range(start, len(text)):
        ch = text[i]
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
                # a string ends a value in an array, or a value after a colon
                if stack and (stack[-1] == "[" or expecting_value_after_colon):
                    cut, cut_stack = i + 1, list(stack)
                    expecting_value_after_colon = False
            continue
        if ch == '"':
            in_str = True
        elif ch in "{[":
            stack.append(ch)
            expecting_value_after_colon = False
        elif ch in "}]":
            if not stack:
                break
            stack.pop()
            cut, cut_stack = i + 1, list(stack)
            if not stack:
                return text[start:i + 1]
        elif ch == ":":
            expecting_value_after_colon = True
        elif ch == ",":
            expecting_value_after_colon = False
        elif ch.isdigit() or ch in "tfn-":
            if expecting_value_after_colon or (stack and stack[-1] == "["):
                j = i
                while j < len(text) and text[j] not in ",}]\n":
                    j += 1
                if j < len(text):
                    cut, cut_stack = j, list(stack)
    if cut is None or not cut_stack:
        return None
    closers = "".join("}" if b == "{" else "]" for b in reversed(cut_stack))
    return re.sub(r",\s*$", "", text[start:cut]) + closers


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
