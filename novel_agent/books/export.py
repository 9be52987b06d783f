"""The manuscript out: a project's scenes as one markdown, text, HTML, EPUB or Word book.

    collect(project, scene_range, chapters) -> Book    what goes in, in order
    render_markdown / render_text / render_html / render_epub (epub.py)
    / render_docx (docx_manuscript.py: Standard Manuscript Format, to send)
                                     (Book) -> str | bytes, pure
    export(project, fmt, out, chapters, scene_range) -> ExportResult
                                     the edge: collect, render, write atomically

Chapters break every N scenes (titled by their first scene), at the
checkpoints' ranges (summaries/checkpoint_NNN.md; "Chapter K (scenes a–b)",
the scenes after the last checkpoint make one more), at the outline's chapters
(each scene says its chapter; "Chapter 3: The Cold Ledger", the outline's
title; scenes written before the outline, "Scenes a–b"), or not at all; `auto`
(the default) is the outline's chapters in a book with one, else the checkpoints'. Scene
bodies are markdown; their front matter never reaches the book. Nothing is
written unless the whole book rendered.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from novel_agent.books.book import Book, Chapter
from novel_agent.books.epub import render_epub
from novel_agent.books.markdown import blocks_html, blocks_markdown, blocks_text, scene_blocks
from novel_agent.errors import ExportError
from novel_agent.files import atomic_write
from novel_agent.story.outline.file import Outline, load_outline
from novel_agent.story.project.folder import Project
from novel_agent.story.scenes import Scene, load_scenes
from novel_agent.story.summaries import load_tree

FORMATS = ("md", "txt", "html", "epub", "docx")
RANGE_RE = re.compile(r"^\s*(\d+)\s*(?:[-–]\s*(\d+)\s*)?$")
EVERY_RE = re.compile(r"^every:(\d+)$")


@dataclass(frozen=True)
class ExportResult:
    """What `export` wrote."""

    path: Path
    scenes: int
    words: int
    chapters: int


# -- what goes in ------------------------------------------------------------
def parse_range(spec: str, ticks: list[int]) -> tuple[int, int]:
    """`A-B` (or `N`) as the first and last scene to take; both must be scenes' ticks
    within the project's first..last."""
    match = RANGE_RE.match(spec)
    if not match:
        raise ExportError(f"bad --range '{spec}': use A-B, e.g. 1-10")
    first = int(match.group(1))
    last = int(match.group(2) or first)
    if first > last:
        raise ExportError(f"bad --range '{spec}': {first} comes after {last}")
    if first < ticks[0] or last > ticks[-1]:
        raise ExportError(f"--range {spec} is outside the scenes ({ticks[0]}–{ticks[-1]})")
    return first, last


def parse_chapters(spec: str) -> tuple[str, int]:
    """`every:N`, `checkpoints`, `outline`, `auto` or `none` as (kind, N)."""
    match = EVERY_RE.match(spec.strip())
    if match and int(match.group(1)) >= 1:
        return "every", int(match.group(1))
    if spec.strip() in ("checkpoints", "outline", "auto", "none"):
        return spec.strip(), 0
    raise ExportError(f"bad --chapters '{spec}': use every:N (N ≥ 1), checkpoints, outline, "
                      "auto or none")


def _span(scenes: tuple[Scene, ...] | list[Scene]) -> str:
    first, last = scenes[0].tick, scenes[-1].tick
    return f"scene {first}" if first == last else f"scenes {first}–{last}"


def _by_checkpoints(project: Project, scenes: list[Scene]) -> list[Chapter]:
    ranges = [(d.first, d.last) for d in load_tree(project.summaries_dir).checkpoints()]
    groups: list[tuple[int, list[Scene]]] = []
    for scene in scenes:
        number = next((n for n, (a, b) in enumerate(ranges, 1) if a <= scene.tick <= b),
                      None) or 1 + sum(b < scene.tick for _, b in ranges)
        if groups and groups[-1][0] == number:
            groups[-1][1].append(scene)
        else:
            groups.append((number, [scene]))
    return [Chapter(f"Chapter {n} ({_span(group)})", tuple(group)) for n, group in groups]


def _by_outline(outline: Outline, scenes: list[Scene]) -> list[Chapter]:
    """Runs of scenes of one chapter, titled by the outline (a chapter it no longer has,
    by its number); a run of scenes with none, by its span."""
    groups: list[tuple[int | None, list[Scene]]] = []
    for scene in scenes:
        if groups and groups[-1][0] == scene.chapter:
            groups[-1][1].append(scene)
        else:
            groups.append((scene.chapter, [scene]))

    def title(number: int | None, group: list[Scene]) -> str:
        if number is None:
            return _span(group).capitalize()
        chapter = outline.chapter(number)
        return f"Chapter {number}: {chapter.title}" if chapter else f"Chapter {number}"

    return [Chapter(title(n, group), tuple(group)) for n, group in groups]


def chapters_of(project: Project, scenes: list[Scene], spec: str) -> list[Chapter]:
    """The scenes cut into chapters by `spec` (see parse_chapters)."""
    kind, size = parse_chapters(spec)
    if kind in ("outline", "auto"):
        outline = load_outline(project.outline_file)
        if outline is not None:
            return _by_outline(outline, scenes)
        if kind == "outline":
            raise ExportError(f"--chapters outline: project '{project.name}' has no outline "
                              f"(make one with `novel outline -p {project.name}`)")
        kind = "checkpoints"
    if kind == "none":
        return [Chapter(_span(scenes).capitalize(), tuple(scenes))]
    if kind == "checkpoints":
        return _by_checkpoints(project, scenes)
    runs = [tuple(scenes[i:i + size]) for i in range(0, len(scenes), size)]
    return [Chapter(run[0].title or f"Chapter {n}", run) for n, run in enumerate(runs, 1)]


def collect(project: Project, scene_range: str | None = None,
            chapters: str = "auto") -> Book:
    """The book as the project holds it now: title page from project.yaml (`title`,
    else the project's name; `premise` as the blurb; `author`), the scenes in tick
    order (within `scene_range`, "A-B"), cut into chapters by `chapters`."""
    parse_chapters(chapters)
    scenes = load_scenes(project.scenes_dir)
    if not scenes:
        raise ExportError(f"project '{project.name}' has no scenes yet: "
                          "write some with `novel tick`")
    if scene_range:
        first, last = parse_range(scene_range, [s.tick for s in scenes])
        scenes = [s for s in scenes if first <= s.tick <= last]
        if not scenes:
            raise ExportError(f"--range {scene_range} holds no scene")
    data = project.story_data()
    newest = max(s.path.stat().st_mtime for s in scenes if s.path)
    return Book(
        name=project.name,
        title=str(data.get("title") or "").strip() or project.name,
        author=str(data.get("author") or "").strip(),
        blurb=str(data.get("premise") or "").strip(),
        chapters=tuple(chapters_of(project, scenes, chapters)),
        modified=datetime.fromtimestamp(int(newest), UTC))


# -- renderers ---------------------------------------------------------------
def _chapter_blocks(chapter: Chapter, render: Callable, brk: list[str]) -> list[str]:
    out: list[str] = []
    for n, scene in enumerate(chapter.scenes):
        out += (brk if n else []) + render(scene_blocks(scene.body, scene.title, chapter.title))
    return out


def render_markdown(m: Book) -> str:
    """The book as markdown: `#` title, `##` chapters, `* * *` between scenes."""
    parts = [f"# {m.title}"]
    parts += [f"*by {m.author}*"] if m.author else []
    parts += [m.blurb] if m.blurb else []
    for chapter in m.chapters:
        parts.append(f"## {chapter.title}")
        parts += _chapter_blocks(chapter, blocks_markdown, ["* * *"])
    return "\n\n".join(parts) + "\n"


def render_text(m: Book) -> str:
    """The book as plain text: chapter titles underlined, `* * *` between scenes."""
    parts = [m.title.upper()]
    parts += [f"by {m.author}"] if m.author else []
    parts += [m.blurb] if m.blurb else []
    for chapter in m.chapters:
        parts.append(f"\n{chapter.title}\n{'=' * len(chapter.title)}")
        parts += _chapter_blocks(chapter, blocks_text, ["* * *"])
    return "\n\n".join(parts) + "\n"


CSS = """body{font-family:Georgia,'Times New Roman',serif;line-height:1.6;max-width:36em;
margin:2em auto;padding:0 1em;color:#222;background:#fdfcf8}
h1,h2{font-weight:normal;text-align:center}h1{font-size:2.2em;margin-top:3em}
.author{text-align:center;font-style:italic}.blurb{text-align:center;margin:2em 0 4em}
nav.toc{margin:3em 0}nav.toc ol{padding-left:1.5em}
section.chapter{margin-top:5em}p{margin:0}p+p{text-indent:1.5em}
hr.break{border:0;text-align:center;margin:1.5em 0}hr.break::after{content:"* * *"}"""


def render_html(m: Book) -> str:
    """The book as one self-contained page: inline CSS, a title page, a table of
    contents linking to each chapter, escaped text in paragraphs."""
    esc = html.escape
    lines = ["<!DOCTYPE html>", f'<html lang="{esc(m.language)}">', "<head>",
             '<meta charset="utf-8">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             f"<title>{esc(m.title)}</title>", f"<style>{CSS}</style>", "</head>", "<body>",
             '<header class="title-page">', f"<h1>{esc(m.title)}</h1>"]
    lines += [f'<p class="author">by {esc(m.author)}</p>'] if m.author else []
    lines += [f'<p class="blurb">{esc(m.blurb)}</p>'] if m.blurb else []
    lines += ["</header>", '<nav class="toc">', "<h2>Contents</h2>", "<ol>"]
    lines += [f'<li><a href="#chapter-{n}">{esc(c.title)}</a></li>'
              for n, c in enumerate(m.chapters, 1)]
    lines += ["</ol>", "</nav>", "<main>"]
    for n, chapter in enumerate(m.chapters, 1):
        lines += [f'<section class="chapter" id="chapter-{n}">', f"<h2>{esc(chapter.title)}</h2>"]
        for k, scene in enumerate(chapter.scenes):
            lines += ['<hr class="break">'] if k else []
            lines += [f'<div class="scene" id="scene-{scene.tick}">',
                      *blocks_html(scene_blocks(scene.body, scene.title, chapter.title)), "</div>"]
        lines.append("</section>")
    lines += ["</main>", "</body>", "</html>"]
    return "\n".join(lines) + "\n"


def render_docx(m: Book) -> bytes:
    """The book as a Word manuscript in Standard Manuscript Format (docx_manuscript.py,
    with python-docx, imported only now)."""
    from novel_agent.books.docx_manuscript import render_docx as render

    return render(m)


RENDERERS: dict[str, Callable[[Book], str | bytes]] = {
    "md": render_markdown, "txt": render_text, "html": render_html, "epub": render_epub,
    "docx": render_docx}


# -- the edge ----------------------------------------------------------------
def default_path(project: Project, fmt: str) -> Path:
    """Where a book goes without -o: <project>/export/<name>.<fmt>."""
    return project.root / "export" / f"{project.name}.{fmt}"


def export(project: Project, fmt: str = "md", out: Path | str | None = None,
           chapters: str = "auto", scene_range: str | None = None) -> ExportResult:
    """Make the book and write it to `out` (a file, or a folder to put <name>.<fmt> in;
    default `default_path`), atomically. Raises ExportError before writing anything."""
    if fmt not in RENDERERS:
        raise ExportError(f"unknown format '{fmt}': use one of {', '.join(FORMATS)}")
    manuscript = collect(project, scene_range, chapters)
    data = RENDERERS[fmt](manuscript)
    path = Path(out).expanduser() if out else default_path(project, fmt)
    if path.is_dir():
        path = path / f"{project.name}.{fmt}"
    atomic_write(path, data)
    return ExportResult(path, len(manuscript.scenes), manuscript.words, len(manuscript.chapters))
