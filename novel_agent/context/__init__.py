"""The context engine: what goes into each stage's prompt, and in which order."""

from .briefing import Briefing
from .builders import extractor_briefing, planner_briefing, summarizer_briefing
from .sections import Context, Section

__all__ = ["Briefing", "Context", "Section", "planner_briefing", "extractor_briefing",
           "summarizer_briefing"]
