"""What the tick tells a model of the story with each request (Request.context).

A model that answers from the story rather than from its prompt (the offline model,
models/offline.py) reads the story, the tick's memory, plan and prose, for the
summarizer the range and items to name, for the outline what each call asks for. The
pipeline keeps a StorySource current as the tick goes (the session's `source`); the
session puts its `view()` on each request it sends (tick/session.py), as the request
goes out, so a model sees the story as it stands at that call.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from novel_agent.story.memory import Memory


@dataclass
class SummaryJob:
    """What the summarizer is asked to condense, for the offline summarizer."""

    kind: str                       # "checkpoint", "arc" or "overall"
    first: int
    last: int
    items: list[tuple[str, str]] = field(default_factory=list)   # (kind, label) to name
    previous: str = ""              # the overall summary so far ("overall" only)
    new: list[str] = field(default_factory=list)                  # new summaries' bodies


@dataclass
class StorySource:
    """Where the tick stands, for the requests' context; the pipeline keeps it current."""

    story: Any = None
    memory: Memory = field(default_factory=Memory)
    tick: int = 0
    plan: Any = None                 # the tick's Plan, once planned
    prose: str = ""                  # the tick's prose, once written
    min_words: int = 200
    max_words: int = 400
    summary: SummaryJob | None = None
    steer: str = ""                  # the author's note in force for this tick
    outline: dict[str, Any] | None = None   # what an outline call asks for (its prompt's values)
    target_tension: int | None = None      # the scene's target, in a book with an outline
    due: list[str] = field(default_factory=list)   # the ids of the loops due, most urgent first
    no_new_loops: bool = False             # the final act of a book with an outline

    def view(self) -> dict[str, Any]:
        """The source as the plain values a request's context holds."""
        job = self.summary
        out: dict[str, Any] = {"story": self.story, "memory": self.memory, "tick": self.tick,
                               "plan": self.plan, "prose": self.prose,
                               "min_words": self.min_words, "max_words": self.max_words,
                               "steer": self.steer}
        if self.target_tension is not None:
            out["target_tension"] = self.target_tension
        if self.due:
            out["due"] = list(self.due)
        if self.no_new_loops:
            out["no_new_loops"] = True
        if self.outline is not None:
            out["outline"] = self.outline
        if job is not None:
            out.update(kind=job.kind, first=job.first, last=job.last, items=job.items,
                       previous=job.previous, new=job.new)
        return out
