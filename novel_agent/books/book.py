"""A book as readers get it: a title page and chapters of scenes, in order.

`books.export` collects one from a project; the renderers (markdown, text, HTML in
export.py, EPUB in epub.py) turn it into a file.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from novel_agent.story.scenes import Scene


@dataclass(frozen=True)
class Chapter:
    """A run of scenes printed under one heading."""

    title: str
    scenes: tuple[Scene, ...]

    @property
    def words(self) -> int:
        return sum(s.words for s in self.scenes)


@dataclass(frozen=True)
class Book:
    """Everything a renderer needs: the title page and the chapters, in order."""

    name: str
    title: str
    chapters: tuple[Chapter, ...]
    author: str = ""
    blurb: str = ""
    language: str = "en"
    modified: datetime = datetime(2000, 1, 1, tzinfo=UTC)

    @property
    def scenes(self) -> list[Scene]:
        return [scene for chapter in self.chapters for scene in chapter.scenes]

    @property
    def words(self) -> int:
        return sum(c.words for c in self.chapters)
