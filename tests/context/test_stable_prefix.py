"""stable.stable_prefix: where a stage's prompt stops changing from tick to tick."""

from __future__ import annotations

from dataclasses import replace

import pytest

from novel_agent.context.prompts import SAMPLE_VALUES, render_stage, sample_context
from novel_agent.context.stable import (
    GROWING_SECTIONS,
    STABLE_SECTIONS,
    first_user,
    growing_prefix,
    stable_prefix,
)


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


@pytest.mark.parametrize("stage", ["planner", "writer"])
def test_the_growing_prefix_ends_after_the_recent_scenes(stage):
    context = sample_context(stage, SAMPLE_VALUES[stage][0])
    user = first_user(render(context))
    stable, growing = stable_prefix(context, render), growing_prefix(context, render)
    assert 0 < stable < growing
    kept = STABLE_SECTIONS[stage] + GROWING_SECTIONS[stage]
    first_other = next(s for s in context.sections if s.name not in kept)
    assert user[growing:].startswith(f"## {first_other.title}\n")
    for name in GROWING_SECTIONS[stage]:
        section = context.section(name)
        assert section is not None and f"## {section.title}\n{section.text}" in \
            user[stable:growing]
    # a scene appended to the last recent section keeps everything before it
    last = GROWING_SECTIONS[stage][-1]
    grown = replace(context, sections=tuple(
        replace(s, text=s.text + "\n\nScene 13 — The Salt Map") if s.name == last else s
        for s in context.sections))
    assert first_user(render(grown))[:growing - 2] == user[:growing - 2]
    assert growing_prefix(grown, render) > growing
    assert growing_prefix(sample_context("summarizer", SAMPLE_VALUES["summarizer"][0]),
                          render) == 0
