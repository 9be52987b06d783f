"""Every section of every stage's prompt has its mark in the budget bar (`novel context`,
the browser's context page): a new section drawn as "?" reads as a defect."""

from __future__ import annotations

from novel_agent.context.auditor import AUDITOR_LAYOUT
from novel_agent.context.builders import EXTRACTOR_LAYOUT, PLANNER_LAYOUT, SUMMARIZER_LAYOUT
from novel_agent.context.outline_briefing import OUTLINE_LAYOUT
from novel_agent.context.report import SECTION_MARKS
from novel_agent.context.writer import WRITER_ORDER


def test_every_section_of_every_stage_has_a_mark():
    layouts = (PLANNER_LAYOUT, EXTRACTOR_LAYOUT, SUMMARIZER_LAYOUT, AUDITOR_LAYOUT,
               OUTLINE_LAYOUT, WRITER_ORDER, ("instructions", "tools", "intention"))
    unmarked = sorted({s for layout in layouts for s in layout} - SECTION_MARKS.keys())
    assert unmarked == []
    assert all(len(mark) == 1 and mark not in "·?" for mark in SECTION_MARKS.values())
