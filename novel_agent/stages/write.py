"""Stage 2, write: the writer turns the plan and the context into prose."""

from __future__ import annotations

import re
from ..models.base import ChatModel
from ..models.ask import StageCall, ask_text


def clean_prose(text: str) -> str:
    """Strip what models wrap prose in: code fences, a leading 'Scene N' heading."""
    text = text.strip()
    fenced = re.fullmatch(r"```(?:markdown|md)?\s*(.*?)```", text, re.S)
    if fenced:
        text = fenced.group(1).strip()
    text = re.sub(r"^#+\s*scene\s+\d+[^\n]*\n+", "", text, flags=re.I)
    return text.strip()


def run(model: ChatModel, messages: list[dict[str, str]], *,
        max_tokens: int) -> tuple[str, StageCall]:
    """Write the scene's prose from the writer's prompt."""
    text, call = ask_text(model, "writer", messages, max_tokens)
    return clean_prose(text), call
