"""Manuscripts to import: `write_book(path, chapters, scenes)` writes chapters of scenes
between `* * *` breaks, each scene ~120 words naming one of PEOPLE and ending with
"This is scene C.S."."""

from __future__ import annotations

from tests.support.story_factory import prose

PEOPLE = ("Mara Quill", "Tobin Keel", "Ilse Varga")


def scene_text(chapter: int, scene: int) -> str:
    """~120 words that name one of PEOPLE and end with a marker sentence."""
    who = PEOPLE[(chapter + scene) % 3]
    return (f"{who} came down to the harbour in chapter {chapter}. "
            + prose(110, chapter * 10 + scene) + f"\n\nThis is scene {chapter}.{scene}.")


def write_book(path, chapters: int = 3, scenes: int = 3):
    """A manuscript of `chapters` chapters of `scenes` scenes between `* * *` breaks."""
    parts = []
    for c in range(1, chapters + 1):
        parts.append(f"# Chapter {c}")
        parts.append("\n\n* * *\n\n".join(scene_text(c, s) for s in range(1, scenes + 1)))
    path.write_text("\n\n".join(parts) + "\n", encoding="utf-8")
    return path
