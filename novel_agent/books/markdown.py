"""A scene's markdown body as blocks, and blocks as markdown, plain text or (X)HTML.

A body splits at blank lines into blocks: a heading (`# ...`), a break (a line
of `***`, `* * *`, `---`, `___`, or a lone `#`) or a paragraph, whose lines
join with a space. Inline, only `*em*`, `_em_` and `**strong**` are understood;
everything else is text, escaped for HTML. Pure functions, used by export.py.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

BREAK_RE = re.compile(r"^\s*(?:(?:\*\s*){3,}|(?:-\s*){3,}|(?:_\s*){3,}|#)\s*$")
HEADING_RE = re.compile(r"^\s{0,3}(#{1,6})\s+(.+?)(?:\s+#+)?\s*$")
STRONG_RE = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")
EM_RE = re.compile(r"(?<![\w*])\*(?=[^\s*])(.+?)(?<=[^\s*])\*(?![\w*])"
                   r"|(?<!\w)_(?=\S)(.+?)(?<=\S)_(?!\w)")


@dataclass(frozen=True)
class Block:
    """One block of a body: kind "p" (a paragraph), "heading" or "break"."""

    kind: str
    text: str = ""


def _key(text: str) -> str:
    return " ".join(re.findall(r"\w+", plain(text).lower()))


def blocks(body: str, title: str = "") -> list[Block]:
    """The body's blocks, in order. A leading heading that repeats `title` is dropped
    (the chapter or scene title is printed already), and so are breaks at either end."""
    out: list[Block] = []
    para: list[str] = []

    def flush() -> None:
        if para:
            out.append(Block("p", " ".join(para)))
            para.clear()

    for line in body.replace("\r\n", "\n").split("\n"):
        heading = HEADING_RE.match(line)
        if not line.strip():
            flush()
        elif BREAK_RE.match(line):
            flush()
            out.append(Block("break"))
        elif heading:
            flush()
            out.append(Block("heading", heading.group(2)))
        else:
            para.append(line.strip())
    flush()
    if out and out[0].kind == "heading" and title and _key(out[0].text) == _key(title):
        out.pop(0)
    while out and out[0].kind == "break":
        out.pop(0)
    while out and out[-1].kind == "break":
        out.pop()
    return out


def inline_html(text: str) -> str:
    """Escape text for (X)HTML and turn **strong** and *em* into tags."""
    escaped = html.escape(text, quote=False)
    escaped = STRONG_RE.sub(r"<strong>\1</strong>", escaped)
    return EM_RE.sub(lambda m: f"<em>{m.group(1) or m.group(2)}</em>", escaped)


def plain(text: str) -> str:
    """Text without its emphasis marks."""
    text = STRONG_RE.sub(r"\1", text)
    return EM_RE.sub(lambda m: m.group(1) or m.group(2), text)


def blocks_html(items: list[Block], heading_tag: str = "h3") -> list[str]:
    """Blocks as lines of (X)HTML: <p>, a heading, or <hr class="break"/> for a break."""
    lines = []
    for block in items:
        if block.kind == "p":
            lines.append(f"<p>{inline_html(block.text)}</p>")
        elif block.kind == "heading":
            lines.append(f"<{heading_tag}>{inline_html(block.text)}</{heading_tag}>")
        else:
            lines.append('<hr class="break"/>')
    return lines


def blocks_markdown(items: list[Block]) -> list[str]:
    """Blocks as markdown paragraphs; headings inside a scene become `###`."""
    return ["* * *" if b.kind == "break" else (f"### {b.text}" if b.kind == "heading" else b.text)
            for b in items]


def blocks_text(items: list[Block]) -> list[str]:
    """Blocks as plain paragraphs, without markdown marks."""
    return ["* * *" if b.kind == "break" else plain(b.text) for b in items]


def scene_blocks(body: str, title: str, chapter_title: str = "") -> list[Block]:
    """A scene's blocks headed by its title (as a heading block), unless the title is
    its chapter's (a chapter titled by its first scene prints it once)."""
    out = blocks(body, title)
    if title.strip() and _key(title) != _key(chapter_title):
        out.insert(0, Block("heading", title.strip()))
    return out
