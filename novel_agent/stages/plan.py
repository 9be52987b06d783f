"""Stage 1, plan: the planner decides the scene and asks for tools."""

from __future__ import annotations

from ..decisions import Plan, plan_from_json, plan_schema
from ..models.base import ChatModel
from ..models.ask import StageCall, ask_json


def run(model: ChatModel, messages: list[dict[str, str]], *, max_tokens: int,
        max_tools: int) -> tuple[Plan, StageCall]:
    """Plan the next scene from the planner's prompt."""
    return ask_json(model, "planner", messages, max_tokens, plan_schema(max_tools),
                    lambda data: plan_from_json(data, max_tools=max_tools))
