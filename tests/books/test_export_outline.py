"""A book with an outline exports its scenes under their chapters' titles (`--chapters
auto`, the default, and `outline`); a book without one as before, at the checkpoints."""

from __future__ import annotations

import pytest

from novel_agent.books.export import ExportError, collect
from novel_agent.story.scenes import Scene
from tests.support.projects import outline_project


def write(project, tick: int, chapter: int | None) -> None:
    project.scene_path(tick).parent.mkdir(parents=True, exist_ok=True)
    project.scene_path(tick).write_text(Scene(tick, f"Scene {tick} happens.", f"Title {tick}",
                                              chapter=chapter).render())


def test_the_scenes_go_under_their_chapters_titles(project, cli):
    for tick, chapter in ((1, None), (2, 1), (3, 1), (4, 2), (5, 3)):
        write(project, tick, chapter)
    with pytest.raises(ExportError, match="has no outline"):
        collect(project, chapters="outline")
    assert [c.title for c in collect(project).chapters] == ["Chapter 1 (scenes 1–5)"]
    outline_project(project, chapters=3)
    for spec in ("auto", "outline"):
        book = collect(project, chapters=spec)
        assert [(c.title, [s.tick for s in c.scenes]) for c in book.chapters] == [
            ("Scene 1", [1]), ("Chapter 1: Chapter 1", [2, 3]), ("Chapter 2: Chapter 2", [4]),
            ("Chapter 3: Chapter 3", [5])]
    out = cli("export", "-p", "harbour", "--format", "md").output
    assert "4 chapters" in out
    text = (project.root / "export" / "harbour.md").read_text()
    assert "## Chapter 2: Chapter 2\n\n### Title 4\n\nScene 4 happens." in text
    assert [c.title for c in collect(project, chapters="checkpoints").chapters] == [
        "Chapter 1 (scenes 1–5)"]
