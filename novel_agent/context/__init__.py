"""The context engine: what goes into each stage's prompt, and in which order."""

from novel_agent.context.briefing import Briefing
from novel_agent.context.builders import extractor_briefing, planner_briefing, summarizer_briefing
from novel_agent.context.sections import Context, Section

__all__ = ["Briefing", "Context", "Section", "planner_briefing", "extractor_briefing",
           "summarizer_briefing"]
