"""stable.stable_prefix: where a stage's prompt stops changing from tick to tick."""

from __future__ import annotations

from dataclasses import replace

import pytest

from novel_agent.context.prompts import SAMPLE_VALUES, render_stage, sample_context
from novel_agent.context.stable import STABLE_SECTIONS, first_user, stable_prefix


def render(context):
    return render_stage(context, None)


@pytest.mark.parametrize("stage", ["planner", "writer", "summarizer"])
def test_the_prefix_ends_before_the_first_section_that_changes_every_tick(stage):
    context = sample_context(stage, SAMPLE_VALUES[stage][0])
    user = first_user(render(context))
    chars = stable_prefix(context, render)
    first_other = next(s for s in context.sections if s.name not in STABLE_SECTIONS[stage])
    assert user[chars:].startswith(f"## {first_other.title}\n")
    assert user[:chars].endswith(f"{context.sections[0].text}\n\n" if stage == "summarizer"
                                 else "\n\n")
    for name in STABLE_SECTIONS[stage]:           # every stable section is before it
        section = context.section(name)
        assert section is not None and f"## {section.title}\n" in user[:chars]
    # what changes every tick moves nothing before it
    moved = replace(context, sections=tuple(
        s if s.name in STABLE_SECTIONS[stage] else replace(s, text=s.text + " Later.")
        for s in context.sections))
    assert first_user(render(moved))[:chars] == user[:chars]
    assert stable_prefix(moved, render) == chars


def test_a_stage_without_stable_sections_has_none():
    context = sample_context("extractor", SAMPLE_VALUES["extractor"][0])
    assert stable_prefix(context, render) == 0
    writer = sample_context("writer", SAMPLE_VALUES["writer"][0])
    bare = replace(writer, sections=tuple(
        replace(s, text="") if s.name in STABLE_SECTIONS["writer"] else s
        for s in writer.sections))
    assert stable_prefix(bare, render) == 0
