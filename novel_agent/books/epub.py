"""A Book as an EPUB 3 book, with the standard library only.

    mimetype                  first, stored uncompressed: application/epub+zip
    META-INF/container.xml    points at the package document
    EPUB/content.opf          metadata, manifest, spine
    EPUB/nav.xhtml            the table of contents
    EPUB/title.xhtml          title, author, blurb
    EPUB/chapter_NNN.xhtml    one file per chapter
    EPUB/style.css

The identifier is a UUID derived from the project's name, and every date
(dcterms:modified, the zip entries') is the manuscript's `modified`, so the
same scenes give the same bytes.
"""

from __future__ import annotations

import io
import uuid
import zipfile
from html import escape

from novel_agent.books.book import Book, Chapter
from novel_agent.books.markdown import blocks_html, scene_blocks

XHTML = "application/xhtml+xml"
CONTAINER = """<?xml version="1.0" encoding="utf-8"?>
<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">
  <rootfiles>
    <rootfile full-path="EPUB/content.opf" media-type="application/oebps-package+xml"/>
  </rootfiles>
</container>
"""
CSS = """body { font-family: serif; line-height: 1.5; margin: 0 5%; }
h1, h2 { font-weight: normal; text-align: center; margin: 2em 0 1em; }
p { margin: 0; text-indent: 1.5em; }
h2 + p, h2 + div p:first-child, hr + p { text-indent: 0; }
p.author, p.blurb { text-align: center; text-indent: 0; margin: 1em 0; }
hr.break { border: 0; margin: 1.5em 0; text-align: center; }
hr.break::after { content: "* * *"; }
nav ol { list-style: none; }
"""


def book_id(name: str) -> str:
    """The book's dc:identifier: stable for a project name."""
    return f"urn:uuid:{uuid.uuid5(uuid.NAMESPACE_URL, f'novel_agent:project:{name}')}"


def chapter_file(number: int) -> str:
    """The file name of chapter `number` (1-based) inside EPUB/."""
    return f"chapter_{number:03d}.xhtml"


def _page(title: str, lang: str, body: list[str]) -> str:
    return "\n".join([
        '<?xml version="1.0" encoding="utf-8"?>', "<!DOCTYPE html>",
        f'<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops" '
        f'lang="{escape(lang)}" xml:lang="{escape(lang)}">',
        "<head>", f"<title>{escape(title)}</title>",
        '<link rel="stylesheet" type="text/css" href="style.css"/>', "</head>",
        "<body>", *body, "</body>", "</html>", ""])


def title_page(m: Book) -> str:
    """The title page: title, author, blurb."""
    body = [f'<section epub:type="titlepage"><h1>{escape(m.title)}</h1>']
    body += [f'<p class="author">by {escape(m.author)}</p>'] if m.author else []
    body += [f'<p class="blurb">{escape(m.blurb)}</p>'] if m.blurb else []
    return _page(m.title, m.language, body + ["</section>"])


def chapter_page(chapter: Chapter, lang: str) -> str:
    """One chapter as XHTML: its heading, then its scenes with breaks between."""
    body = [f'<section epub:type="chapter"><h2>{escape(chapter.title)}</h2>']
    for n, scene in enumerate(chapter.scenes):
        body += ['<hr class="break"/>'] if n else []
        body += [f'<div class="scene" id="scene-{scene.tick}">',
                 *blocks_html(scene_blocks(scene.body, scene.title, chapter.title)), "</div>"]
    return _page(chapter.title, lang, body + ["</section>"])


def nav_page(m: Book) -> str:
    """The EPUB 3 navigation document: one entry per chapter."""
    items = [f'<li><a href="{chapter_file(n)}">{escape(c.title)}</a></li>'
             for n, c in enumerate(m.chapters, 1)]
    return _page("Contents", m.language, ['<nav epub:type="toc" id="toc">', "<h1>Contents</h1>",
                                          "<ol>", *items, "</ol>", "</nav>"])


def package(m: Book) -> str:
    """content.opf: metadata, every file in the manifest, reading order in the spine."""
    modified = m.modified.strftime("%Y-%m-%dT%H:%M:%SZ")
    meta = [f'<dc:identifier id="book-id">{book_id(m.name)}</dc:identifier>',
            f"<dc:title>{escape(m.title)}</dc:title>",
            f"<dc:language>{escape(m.language)}</dc:language>"]
    meta += [f"<dc:creator>{escape(m.author)}</dc:creator>"] if m.author else []
    meta += [f"<dc:description>{escape(m.blurb)}</dc:description>"] if m.blurb else []
    meta.append(f'<meta property="dcterms:modified">{modified}</meta>')
    ids = [f"chapter-{n:03d}" for n in range(1, len(m.chapters) + 1)]
    manifest = [f'<item id="nav" href="nav.xhtml" media-type="{XHTML}" properties="nav"/>',
                '<item id="css" href="style.css" media-type="text/css"/>',
                f'<item id="title" href="title.xhtml" media-type="{XHTML}"/>']
    manifest += [f'<item id="{i}" href="{chapter_file(n)}" media-type="{XHTML}"/>'
                 for n, i in enumerate(ids, 1)]
    spine = ['<itemref idref="title"/>', '<itemref idref="nav"/>']
    spine += [f'<itemref idref="{i}"/>' for i in ids]
    return "\n".join([
        '<?xml version="1.0" encoding="utf-8"?>',
        f'<package xmlns="http://www.idpf.org/2007/opf" version="3.0" '
        f'unique-identifier="book-id" xml:lang="{escape(m.language)}">',
        '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/">', *meta, "</metadata>",
        "<manifest>", *manifest, "</manifest>", "<spine>", *spine, "</spine>", "</package>", ""])


def render_epub(m: Book) -> bytes:
    """The book as EPUB 3 bytes (a zip: `mimetype` first and stored, then the rest deflated)."""
    stamp = max(m.modified.timetuple()[:6], (1980, 1, 1, 0, 0, 0))
    files = [("META-INF/container.xml", CONTAINER), ("EPUB/content.opf", package(m)),
             ("EPUB/nav.xhtml", nav_page(m)), ("EPUB/style.css", CSS),
             ("EPUB/title.xhtml", title_page(m))]
    files += [(f"EPUB/{chapter_file(n)}", chapter_page(c, m.language))
              for n, c in enumerate(m.chapters, 1)]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as book:
        first = zipfile.ZipInfo("mimetype", date_time=stamp)
        first.compress_type = zipfile.ZIP_STORED
        book.writestr(first, b"application/epub+zip")
        for name, text in files:
            info = zipfile.ZipInfo(name, date_time=stamp)
            info.compress_type = zipfile.ZIP_DEFLATED
            book.writestr(info, text.encode("utf-8"))
    return buffer.getvalue()
