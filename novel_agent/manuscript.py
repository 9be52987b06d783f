"""The manuscript in: an existing text cut into scenes, for a later `novel import`.

    read_manuscript(path) -> str          a .md/.txt file, or a folder of them
    split_manuscript(text, mode, max_words) -> [ImportedScene(title, body, chapter)]

Boundaries, by mode:

    chapters   chapter headings; then pieces over max_words split by length
    scenes     chapter headings and scene breaks, exactly (no length split)
    auto       chapter headings and scene breaks, then length (the default)

A chapter heading is a markdown heading (`# Chapter 3`, `## The Bell`) or a
line of its own such as `Chapter 3`, `Chapter Three: The Bell`, `CHAPTER IV`,
`Prologue`. A scene break is a line of `***`, `* * *`, `---`, `___` or a lone
`#`. A length split falls at the paragraph boundary nearest an even share of
max_words, so no piece passes 1.5 × max_words unless one paragraph alone
does; such a paragraph is cut at sentence ends. No word of the text is lost:
headings become titles, breaks are dropped, everything else is in a body.
Pure functions; nothing here writes.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

from novel_agent.books.markdown import BREAK_RE, HEADING_RE
from novel_agent.errors import FileFormatError, ManuscriptError
from novel_agent.files import parse_front_matter
from novel_agent.story.scenes import word_count

MODES = ("auto", "chapters", "scenes")
SUFFIXES = (".md", ".markdown", ".txt")
_UNITS = "one|two|three|four|five|six|seven|eight|nine"
_NUMBER = (rf"\d+|[ivxlcdm]+|(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)"
           rf"(?:[- ](?:{_UNITS}))?|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen"
           rf"|seventeen|eighteen|nineteen|{_UNITS}|hundred")
CHAPTER_RE = re.compile(
    rf"^(?:(?:chapter|part|book)\s+(?:{_NUMBER})|prologue|epilogue|interlude)\b"
    r"\s*(?:[.:—–-]\s*(?P<rest>.*))?$", re.IGNORECASE)
SENTENCE_END_RE = re.compile(r"[.!?…]+[\"'”’)\]]*\s+")
BREAK = "* * *"


@dataclass(frozen=True)
class ImportedScene:
    """One scene cut from a manuscript: its title, its markdown body, its chapter (from 1)."""

    title: str
    body: str
    chapter: int


# -- reading -------------------------------------------------------------------
def natural_key(path: Path) -> list:
    """Sort key that puts ch2 before ch10."""
    return [int(part) if part.isdigit() else part.lower()
            for part in re.split(r"(\d+)", Path(path).name)]


def _strip_front_matter(text: str, path: Path) -> str:
    try:
        meta, body = parse_front_matter(text, path=path)
    except FileFormatError:
        return text
    if meta and all(re.fullmatch(r"[A-Za-z_][\w-]*", str(key)) for key in meta):
        return body
    return text


def _read_one(path: Path) -> str:
    data = path.read_bytes()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ManuscriptError(f"{path}: not UTF-8 text (byte 0x{data[exc.start]:02x} at "
                              f"offset {exc.start}); save it as UTF-8") from None
    return _strip_front_matter(text.replace("\r\n", "\n").replace("\r", "\n"), path)


def read_manuscript(path: Path | str) -> str:
    """The text of a .md/.txt file, or of a folder's .md/.txt files in natural order
    (ch2 before ch10) with a scene break between files. Front matter is dropped."""
    path = Path(path).expanduser()
    if path.is_dir():
        files = sorted((p for p in path.iterdir() if p.is_file() and not p.name.startswith(".")
                        and p.suffix.lower() in SUFFIXES), key=natural_key)
        if not files:
            raise ManuscriptError(f"{path}: no .md or .txt files in this folder")
        return "\n\n* * *\n\n".join(_read_one(p).strip() for p in files) + "\n"
    if not path.is_file():
        raise ManuscriptError(f"{path}: no such file or folder")
    if path.suffix.lower() not in SUFFIXES:
        raise ManuscriptError(f"{path}: not a .md or .txt file")
    return _read_one(path)


# -- splitting -----------------------------------------------------------------
def _subtitle(lines: list[str], i: int) -> str:
    """The short line under a bare `CHAPTER IV`, when it stands alone as a title."""
    nxt = lines[i + 1].strip() if i + 1 < len(lines) else ""
    after = lines[i + 2].strip() if i + 2 < len(lines) else ""
    if (nxt and not after and len(nxt.split()) <= 10 and not BREAK_RE.match(nxt)
            and not nxt.endswith((".", "!", "?", '"', "”", ",", ";"))):
        return nxt
    return ""


def tokens(text: str) -> list[tuple[str, str]]:
    """The text as ("heading", title), ("break", "") and ("para", text) in order."""
    out: list[tuple[str, str]] = []
    para: list[str] = []
    lines = text.replace("\r\n", "\n").split("\n")

    def flush() -> None:
        if para:
            out.append(("para", "\n".join(para)))
            para.clear()

    i = 0
    while i < len(lines):
        line, stripped = lines[i], lines[i].strip()
        heading = HEADING_RE.match(line)
        chapter = CHAPTER_RE.match(stripped) if not para and len(stripped) <= 80 else None
        if not stripped:
            flush()
        elif heading or chapter:
            flush()
            title = heading.group(2).strip() if heading else stripped
            if chapter and not chapter.group("rest") and (sub := _subtitle(lines, i)):
                title, i = f"{stripped.rstrip('.:—–- ')}: {sub}", i + 1
            out.append(("heading", title))
        elif BREAK_RE.match(line):
            flush()
            out.append(("break", ""))
        else:
            para.append(line.rstrip())
        i += 1
    flush()
    return out


def _pack(items: list[str], limit: int) -> list[list[str]]:
    """Consecutive groups of items, each near an even share of `limit` words and at most
    1.5 × limit (unless one item alone is larger)."""
    counts = [word_count(item) for item in items]
    groups: list[list[str]] = []
    current: list[str] = []
    words, remaining = 0, sum(counts)
    target = remaining / max(1, math.ceil(remaining / limit))
    for item, count in zip(items, counts):
        if current and (words + count > limit * 1.5 or words + count - target > target - words):
            groups.append(current)
            remaining -= words
            target = remaining / max(1, math.ceil(remaining / limit))
            current, words = [], 0
        current.append(item)
        words += count
    groups.append(current)
    return groups


def _sentences(paragraph: str) -> list[str]:
    cuts = [0, *(m.end() for m in SENTENCE_END_RE.finditer(paragraph)), len(paragraph)]
    return [paragraph[a:b].strip() for a, b in zip(cuts, cuts[1:]) if paragraph[a:b].strip()]


def split_long(paragraphs: list[str], max_words: int) -> list[list[str]]:
    """Paragraphs cut into runs of about max_words at paragraph boundaries; a paragraph
    over 1.5 × max_words is first cut at sentence ends."""
    units: list[str] = []
    for paragraph in paragraphs:
        if word_count(paragraph) > max_words * 1.5:
            units += [" ".join(group) for group in _pack(_sentences(paragraph), max_words)]
        else:
            units.append(paragraph)
    return _pack(units, max_words)


def _chapters(items: list[tuple[str, str]]) -> list[tuple[str, list[list[str]]]]:
    """Group tokens into (heading, pieces of paragraphs); a heading with nothing under it
    (`# Part One` right before `## Chapter 1`) joins the next heading."""
    chapters: list[tuple[str, list[list[str]]]] = [("", [[]])]
    for kind, text in items:
        if kind == "heading":
            heading, pieces = chapters[-1]
            if not any(pieces):
                chapters[-1] = (f"{heading} — {text}" if heading else text, [[]])
            else:
                chapters.append((text, [[]]))
        elif kind == "break":
            chapters[-1][1].append([])
        else:
            chapters[-1][1][-1].append(text)
    return [(h, [p for p in pieces if p]) for h, pieces in chapters if any(pieces)]


def _trim_breaks(paragraphs: list[str]) -> list[str]:
    start, end = 0, len(paragraphs)
    while start < end and paragraphs[start] == BREAK:
        start += 1
    while end > start and paragraphs[end - 1] == BREAK:
        end -= 1
    return paragraphs[start:end]


def split_manuscript(text: str, mode: str = "auto", max_words: int = 400) -> list[ImportedScene]:
    """Cut a manuscript into scenes (see the module docstring for the modes). The first
    scene of a chapter takes its heading as title, the next ones "Heading (2)", "(3)", …;
    scenes before any heading are "Scene N"."""
    if mode not in MODES:
        raise ManuscriptError(f"unknown split mode '{mode}': use one of {', '.join(MODES)}")
    if max_words < 1:
        raise ManuscriptError(f"max_words must be at least 1, not {max_words}")
    items = tokens(text)
    if mode == "chapters":   # scene breaks stay in the text, but do not cut it
        items = [("para", BREAK) if kind == "break" else (kind, t) for kind, t in items]
    scenes: list[ImportedScene] = []
    for number, (heading, pieces) in enumerate(_chapters(items), 1):
        if mode != "scenes":
            pieces = [part for piece in pieces for part in split_long(piece, max_words)]
        pieces = [p for p in map(_trim_breaks, pieces) if p]
        for k, piece in enumerate(pieces, 1):
            title = (heading if k == 1 else f"{heading} ({k})") if heading \
                else f"Scene {len(scenes) + 1}"
            scenes.append(ImportedScene(title, "\n\n".join(piece), number))
    return scenes
