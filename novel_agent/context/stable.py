"""Where a stage's prompt stops changing from tick to tick: the end of its stable sections,
and the end of the sections that grow by appending.

The layouts put first what changes only at a checkpoint, or when the planner's anchor
moves (the story bible, the story so far, the settled cast, places and facts); then
what grows by appending (the recent scenes: between two compactions a tick adds one
at their end and changes nothing before it); then what every tick changes. A provider
with an explicit prompt cache puts its breakpoints where the first two parts end
(Request.stable_prefix, Request.growing_prefix; Anthropic's cache_control), so
consecutive ticks read them from the cache rather than pay for them.

`stable_prefix` finds the first place in the rendered prompt, whatever the template:
the prompt is rendered once more with every other section's text replaced by a mark;
the first user message's characters both renders share, back to the blank line before
the first section that differs, depend on the stable sections alone. `growing_prefix`
finds the second the same way, the growing sections kept too.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import replace

from novel_agent.context.builders import PLANNER_GROWING, PLANNER_STABLE, SUMMARIZER_STABLE
from novel_agent.context.sections import Context
from novel_agent.context.writer import WRITER_GROWING, WRITER_STABLE
from novel_agent.errors import ConfigError

STABLE_SECTIONS = {"planner": PLANNER_STABLE, "writer": WRITER_STABLE,
                   "summarizer": SUMMARIZER_STABLE}
GROWING_SECTIONS = {"planner": PLANNER_GROWING, "writer": WRITER_GROWING}
MARK = "\x00"        # what no section's text holds
Render = Callable[[Context], list[dict[str, str]]]


def first_user(messages: list[dict[str, str]]) -> str:
    """The text of the first user message ("" when there is none)."""
    return next((m["content"] for m in messages if m["role"] == "user"), "")


def stable_prefix(context: Context, render: Render) -> int:
    """How many characters at the start of the first user message of `render(context)`
    depend only on the stage's stable sections (0 for a stage without any, or a
    project's template that cannot render the marked sections)."""
    return prefix_of(context, render, STABLE_SECTIONS.get(context.stage, ()))


def growing_prefix(context: Context, render: Render) -> int:
    """How many characters at the start of the first user message depend only on the
    stage's stable sections and those that grow by appending: the next tick's prompt,
    between two compactions, begins with these (0 for a stage without growing ones)."""
    growing = GROWING_SECTIONS.get(context.stage, ())
    if not growing:
        return 0
    return prefix_of(context, render, (*STABLE_SECTIONS.get(context.stage, ()), *growing))


def prefix_of(context: Context, render: Render, names: tuple[str, ...]) -> int:
    """How many characters at the start of the first user message depend only on the
    sections `names`, up to a blank line (0 when none of them holds text)."""
    if not names or not any(s.text.strip() for s in context.sections if s.name in names):
        return 0
    marked = replace(context, sections=tuple(
        s if s.name in names else replace(s, text=MARK) for s in context.sections))
    try:
        sent, other = first_user(render(context)), first_user(render(marked))
    except ConfigError:
        return 0
    shared = len(os.path.commonprefix([sent, other]))
    if shared == len(sent):       # no other section shows: the whole message is theirs
        return shared
    cut = sent.rfind("\n\n", 0, shared)
    return cut + 2 if cut >= 0 else 0
