"""The context engine: what goes into each stage's prompt, and in which order."""

from .sections import Context, Section
from .builders import extractor_context, planner_context, summarizer_context

__all__ = ["Context", "Section", "planner_context", "extractor_context",
           "summarizer_context"]
