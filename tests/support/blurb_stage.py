"""A stage of a test's own, as a plugin would add one: a one-line blurb of each scene,
asked after the extractor (tests/tick/test_new_stage.py declares it with one line)."""

from __future__ import annotations

from dataclasses import replace

from novel_agent.context import Briefing, Section
from novel_agent.models.ask import StageCall, ask_text
from novel_agent.tick.draft import TickContext, TickDraft
from novel_agent.tick.registry import Stage
from novel_agent.tick.stage_prompts import fit_briefing

TEMPLATE = """{% import "_sections.j2" as layout %}
{% set system %}You write the one-line blurb of a scene of a novel.{% endset %}
{{ layout.render(sections) }}
Write the blurb of scene {{ tick }}: one line."""


def build(ctx: TickContext, d: TickDraft) -> TickDraft:
    briefing = Briefing("blurb", (Section("scene", "The scene", d.prose, pinned=True),), (),
                        ("scene",), values={"tick": d.tick})
    return d.with_built(fit_briefing(ctx.session, briefing, d.tick))


def ask(ctx: TickContext, d: TickDraft) -> tuple[str, StageCall]:
    built = d.built["blurb"]
    return ask_text(ctx.model(d, built), "blurb", built.messages, ctx.budget("blurb").max_output)


def apply(ctx: TickContext, d: TickDraft, blurb: str, call: StageCall) -> TickDraft:
    return replace(d, answers={**d.answers, "blurb": blurb})


STAGE = Stage("blurb", build=build, ask=ask, apply=apply)
