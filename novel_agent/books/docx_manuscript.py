"""A Book as a Word manuscript (.docx) in Standard Manuscript Format, with python-docx.

What an agent or an editor asks for (William Shunn's "Proper Manuscript Format", the
form most submission guidelines point to):

- a title page: the author's name and contact block at the top left (placeholders in
  brackets to fill in), the word count at the top right, rounded (`rounded_words`), and
  the title with "by" and the author's name a third of the way down, centered;
- Times New Roman, 12 point, double spaced, 1-inch margins on a US Letter page;
- a header on every page after the title page, at the right: the author's surname, the
  title and the page number (counted from 1 on the first page of the text);
- each chapter on a new page, its title centered a third of the way down;
- every paragraph's first line indented half an inch, no space between paragraphs;
- scene breaks as a centered `#` (between the scenes of a chapter, and a break inside
  a scene); "END" centered after the last line.

A scene's title is left out (a manuscript divides scenes with `#`); `*em*` and
`**strong**` stay italic and bold. The paragraph styles are named ("Manuscript Text",
"Chapter Title", "Scene Break", "Title Page"), so the file reads as it looks in Word or
LibreOffice and a test can check it. books/export.py imports this module (and so
python-docx, 85 ms) only to render a .docx: the CLI starts as fast as before.
"""

from __future__ import annotations

import io
import re

from docx import Document
from docx.document import Document as DocxDocument
from docx.enum.section import WD_SECTION
from docx.enum.style import WD_STYLE_TYPE
from docx.enum.text import WD_ALIGN_PARAGRAPH, WD_LINE_SPACING, WD_TAB_ALIGNMENT
from docx.oxml import OxmlElement
from docx.oxml.ns import qn
from docx.section import Section
from docx.shared import Inches, Pt

from novel_agent.books.book import Book
from novel_agent.books.markdown import EM_RE, STRONG_RE, Block, blocks

FONT = "Times New Roman"
CONTACT = ("[Street Address]", "[City, State ZIP]", "[Phone]", "[Email]")
STYLES = ("Manuscript Text", "Chapter Title", "Scene Break", "Title Page")
# What follows w:pgNumType in a w:sectPr (the schema's order, which Word holds to).
AFTER_PAGE_NUMBERS = ("w:cols", "w:formProt", "w:vAlign", "w:noEndnote", "w:titlePg",
                      "w:textDirection", "w:bidi", "w:rtlGutter", "w:docGrid",
                      "w:printerSettings", "w:sectPrChange")


def rounded_words(words: int) -> int:
    """The word count a manuscript's title page gives ("about 85,000 words"): to the
    nearest 100 up to 1,500 words, to the nearest 500 up to 10,000, to the nearest 1,000
    beyond (Shunn's rule, as a novel gives it); never 0."""
    step = 100 if words < 1_500 else 500 if words < 10_000 else 1_000
    return max(step if words else 0, int(words / step + 0.5) * step)


def surname(author: str) -> str:
    """The surname a manuscript's header gives: the author's last name, or a placeholder."""
    names = author.split()
    return names[-1] if names else "[Surname]"


def inline_runs(text: str) -> list[tuple[str, bool, bool]]:
    """A paragraph's text as (text, italic, bold) runs: `**strong**` and `*em*` marks
    taken off, as markdown.inline_html reads them."""
    out: list[tuple[str, bool, bool]] = []
    for n, part in enumerate(STRONG_RE.split(text)):
        bold = n % 2 == 1
        pieces = EM_RE.split(part)
        # re.split with EM_RE's two groups: text, em (*), em (_), text, ...
        for k in range(0, len(pieces), 3):
            if pieces[k]:
                out.append((pieces[k], False, bold))
            if k + 2 < len(pieces):
                em = pieces[k + 1] or pieces[k + 2]
                if em:
                    out.append((em, True, bold))
    return out


def render_docx(m: Book) -> bytes:
    """The book as a .docx file in Standard Manuscript Format (see the module)."""
    doc = Document()
    _styles(doc)
    _page(doc.sections[0])
    _title_page(doc, m)
    text = doc.add_section(WD_SECTION.NEW_PAGE)
    _page(text)
    _header(text, m)
    _number_from_one(text)
    body_started = False
    for chapter in m.chapters:
        title = doc.add_paragraph(chapter.title, style="Chapter Title")
        title.paragraph_format.page_break_before = body_started
        body_started = True
        for n, scene in enumerate(chapter.scenes):
            if n:
                doc.add_paragraph("#", style="Scene Break")
            for block in blocks(scene.body, scene.title):
                _block(doc, block)
    doc.add_paragraph("END", style="Scene Break")
    props = doc.core_properties
    props.title, props.author = m.title, m.author
    props.created = props.modified = m.modified.replace(tzinfo=None)
    props.last_modified_by, props.revision = m.author, 1
    out = io.BytesIO()
    doc.save(out)
    return out.getvalue()


def _styles(doc: DocxDocument) -> None:
    """Normal: Times New Roman 12, double spaced, no space between paragraphs; the
    manuscript's own styles on it."""
    normal = doc.styles["Normal"]
    normal.font.name, normal.font.size = FONT, Pt(12)
    fonts = normal.element.get_or_add_rPr().get_or_add_rFonts()
    for script in ("w:ascii", "w:hAnsi", "w:eastAsia", "w:cs"):
        fonts.set(qn(script), FONT)
    para = normal.paragraph_format
    para.line_spacing_rule = WD_LINE_SPACING.DOUBLE
    para.space_before, para.space_after = Pt(0), Pt(0)
    for name in STYLES:
        style = doc.styles.add_style(name, WD_STYLE_TYPE.PARAGRAPH)
        style.base_style = normal
        fmt = style.paragraph_format
        fmt.first_line_indent = Inches(0.5) if name == "Manuscript Text" else Inches(0)
        if name in ("Chapter Title", "Scene Break"):
            fmt.alignment = WD_ALIGN_PARAGRAPH.CENTER
        if name == "Chapter Title":
            fmt.space_before, fmt.space_after = Inches(2), Pt(24)
            fmt.keep_with_next = True
        if name == "Title Page":
            fmt.line_spacing_rule = WD_LINE_SPACING.SINGLE


def _page(section: Section) -> None:
    section.page_width, section.page_height = Inches(8.5), Inches(11)
    for side in ("top_margin", "bottom_margin", "left_margin", "right_margin"):
        setattr(section, side, Inches(1))
    section.header_distance = Inches(0.5)


def _title_page(doc: DocxDocument, m: Book) -> None:
    """The contact block at the left and the word count at the right of its first lines,
    then the title and the byline a third of the way down."""
    lines = [m.author or "[Your Name]", *CONTACT]
    count = f"about {rounded_words(m.words):,} words"
    for n, line in enumerate(lines):
        para = doc.add_paragraph(style="Title Page")
        para.paragraph_format.tab_stops.add_tab_stop(Inches(6.5), WD_TAB_ALIGNMENT.RIGHT)
        para.add_run(line + (f"\t{count}" if n == 0 else ""))
    for n, line in enumerate((m.title, f"by {m.author or '[Your Name]'}")):
        para = doc.add_paragraph(line, style="Title Page")
        para.alignment = WD_ALIGN_PARAGRAPH.CENTER
        para.paragraph_format.space_before = Inches(2.2) if n == 0 else Pt(12)


def _header(section: Section, m: Book) -> None:
    """"Surname / Title / N" at the right of every page of the text."""
    section.header.is_linked_to_previous = False
    para = section.header.paragraphs[0]
    para.alignment = WD_ALIGN_PARAGRAPH.RIGHT
    para.add_run(f"{surname(m.author)} / {m.title} / ")
    field = OxmlElement("w:fldSimple")          # the page number, as Word counts it
    field.set(qn("w:instr"), "PAGE")
    run, number = OxmlElement("w:r"), OxmlElement("w:t")
    number.text = "1"
    run.append(number)
    field.append(run)
    para._p.append(field)


def _number_from_one(section: Section) -> None:
    """The text's pages numbered from 1 (the title page is not counted)."""
    numbers = OxmlElement("w:pgNumType")
    numbers.set(qn("w:start"), "1")
    section._sectPr.insert_element_before(numbers, *AFTER_PAGE_NUMBERS)


def _block(doc: DocxDocument, block: Block) -> None:
    """A paragraph (its first line indented), a break (`#`), or a heading inside a scene
    (centered)."""
    if block.kind == "break":
        doc.add_paragraph("#", style="Scene Break")
        return
    para = doc.add_paragraph(style="Manuscript Text")
    if block.kind == "heading":
        para.alignment = WD_ALIGN_PARAGRAPH.CENTER
        para.paragraph_format.first_line_indent = 0
    for text, italic, bold in inline_runs(re.sub(r"\s+", " ", block.text)):
        run = para.add_run(text)
        run.italic, run.bold = italic or None, bold or None
