"""Stage 2, write: the writer turns the plan and the context into prose."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Mapping

from ..context import Context
from ..models.base import ChatModel
from ..prompts import render_stage
from .call import StageCall, ask_text


def clean_prose(text: str) -> str:
    """Strip what models wrap prose in: code fences, a leading 'Scene N' heading."""
    text = text.strip()
    fenced = re.fullmatch(r"```(?:markdown|md)?\s*(.*?)```", text, re.S)
    if fenced:
        text = fenced.group(1).strip()
    text = re.sub(r"^#+\s*scene\s+\d+[^\n]*\n+", "", text, flags=re.I)
    return text.strip()


def run(model: ChatModel, context: Context, *, max_tokens: int, templates: Path | None = None,
        hints: Mapping[str, Any] | None = None) -> tuple[str, StageCall]:
    """Write the scene's prose."""
    messages = render_stage(context, templates)
    text, call = ask_text(model, "writer", messages, max_tokens, hints)
    return clean_prose(text), call
