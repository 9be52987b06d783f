"""Tension curves: the target tension (0-10) of a point of the book, by where it falls.

`outline.curve` names one (config.settings.CURVES):

- three_act: a setup that climbs to the first turn (a quarter in), a middle that
  keeps rising to the crisis, the climax near the end (nine tenths in), then a
  short fall to the resolution;
- five_act: Freytag's pyramid: exposition, rising action, the climax at the
  middle, falling action, a last suspense before the catastrophe, the close;
- rising: one steady climb from the first page to the last;
- serial: episodes, each rising to a cliffhanger and starting again lower, on a
  slow climb through the book.

`target_tension(curve, progress)` gives the target at `progress` (how far through the
book: 0 the first page, 1 the last); `fill_tensions` gives every beat of an outline without a tension its
curve's target at the beat's place. Pure.
"""

from __future__ import annotations

from dataclasses import replace

from novel_agent.config.settings import CURVES
from novel_agent.story.outline.file import Outline

# Points (progress, tension) the curve runs through, in straight lines between them.
POINTS: dict[str, tuple[tuple[float, float], ...]] = {
    "three_act": ((0.0, 2.0), (0.25, 5.0), (0.5, 6.0), (0.75, 8.0), (0.9, 10.0), (1.0, 3.0)),
    "five_act": ((0.0, 2.0), (0.2, 4.0), (0.5, 9.0), (0.7, 6.0), (0.85, 8.0), (1.0, 3.0)),
    "rising": ((0.0, 2.0), (1.0, 10.0)),
}
EPISODES = 4          # the serial curve's episodes
SERIAL_FLOOR = 3.0    # where the serial's first episode starts
SERIAL_CLIMB = 2.0    # how much higher its last episode starts than its first
SERIAL_WAVE = 4.0     # how far each episode rises to its cliffhanger


def target_tension(curve: str, progress: float) -> float:
    """The target tension of `curve` at `progress` (0 the book's start, 1 its end; clamped),
    from 0 to 10. An unknown curve is a ValueError (the configuration checks its name)."""
    if curve not in CURVES:
        raise ValueError(f"unknown tension curve {curve!r} (curves: {', '.join(CURVES)})")
    p = min(1.0, max(0.0, progress))
    if curve == "serial":
        episode = min(p * EPISODES, EPISODES - 1e-9)
        return min(10.0, SERIAL_FLOOR + SERIAL_CLIMB * p + SERIAL_WAVE * (episode % 1.0))
    points = POINTS[curve]
    for (x0, y0), (x1, y1) in zip(points, points[1:]):
        if p <= x1:
            return y0 + (y1 - y0) * (p - x0) / (x1 - x0)
    return points[-1][1]


def beat_progress(index: int, count: int) -> float:
    """How far through the book beat `index` (0-based) of `count` falls: the middle of its
    share."""
    return (index + 0.5) / max(1, count)


def fill_tensions(outline: Outline, curve: str) -> Outline:
    """The outline with every beat that has no tension given its curve's target at its
    place in the book (rounded to a whole number); beats with one keep it."""
    beats = outline.beats()
    targets = {b.id: round(target_tension(curve, beat_progress(i, len(beats))))
               for i, b in enumerate(beats) if b.tension is None}
    if not targets:
        return outline
    return replace(outline, acts=tuple(replace(act, chapters=tuple(
        replace(c, beats=tuple(replace(b, tension=targets[b.id]) if b.id in targets else b
                               for b in c.beats)) for c in act.chapters)) for act in outline.acts))
