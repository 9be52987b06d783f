"""Stage 1, plan: the planner decides the scene and asks for tools."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from novel_agent.models.ask import Room, StageCall, ask_json
from novel_agent.models.base import ChatModel
from novel_agent.story.decisions import Plan, plan_from_json, plan_schema
from novel_agent.text.names import name_head


def run(model: ChatModel, messages: list[dict[str, str]], *, max_tokens: int,
        max_tools: int, room: Room | None = None) -> tuple[Plan, StageCall]:
    """Plan the next scene from the planner's prompt (`room`: see ask_json)."""
    return ask_json(model, "planner", messages, max_tokens, plan_schema(max_tools),
                    lambda data: plan_from_json(data, max_tools=max_tools), room)


def name_heads(plan: Plan, check: Callable[[str], str | None]) -> Plan:
    """The plan with each POV, location and character that is a description starting with
    a name ("Skerry Light, a lighthouse on a rock island, 1911") cut to that name."""
    return replace(plan, pov=name_head(plan.pov, check),
                   location=name_head(plan.location, check),
                   characters=[name_head(c, check) for c in plan.characters])


def settle_pov(plan: Plan, check: Callable[[str], str | None],
               fallbacks: Sequence[str]) -> tuple[Plan, str]:
    """A plan whose POV is a name: if the planner's is not one (a small model may answer
    a sentence or the premise), the first plausible fallback (the last scene's POV, the
    protagonist) takes its place. Returns (plan, a warning or "")."""
    why = check(plan.pov)
    if not why:
        return plan, ""
    for name in fallbacks:
        if name and not check(name):
            cast = [name] + [c for c in plan.characters if c != plan.pov and c != name]
            return (replace(plan, pov=name, characters=cast),
                    f"the planner's POV {plan.pov[:60]!r} is not a name ({why}); {name} "
                    "tells the scene instead")
    return plan, f"the planner's POV {plan.pov[:60]!r} is not a name ({why})"
