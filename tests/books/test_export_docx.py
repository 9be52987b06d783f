"""`novel export --format docx`: a Word manuscript in Standard Manuscript Format, read back
with python-docx: the title page with its contact block and rounded word count, Times
New Roman 12 double spaced, 1-inch margins, the surname / title / page header from the
text's first page, each chapter on a new page, `#` between scenes, first lines indented."""

from __future__ import annotations

import os

import docx
import pytest
from docx.enum.text import WD_ALIGN_PARAGRAPH, WD_LINE_SPACING
from docx.oxml.ns import qn
from docx.shared import Inches, Pt

from novel_agent.books.docx_manuscript import inline_runs, rounded_words, surname
from novel_agent.books.export import FORMATS, collect, export
from novel_agent.books.markdown import blocks
from novel_agent.files import atomic_write
from novel_agent.story.project.folder import Project, create_project
from novel_agent.story.scenes import Scene, load_scenes
from tests.support.clirunner import invoke


@pytest.fixture(scope="module")
def book(tmp_path_factory):
    """A 12-scene offline project, made once for the module."""
    root = tmp_path_factory.mktemp("book") / "harbour"
    create_project(root, {"name": "harbour", "premise": "A lighthouse keeper finds a map.",
                          "genre": "mystery", "preset": "balanced"},
                   config={"llm": {"provider": "offline"}})
    env = {k: None for k in os.environ if k.startswith("NOVEL_")}
    result = invoke("tick", "-p", str(root), "-n", "12", env=env)
    assert result.exit_code == 0, result.output
    return root


@pytest.fixture
def handmade(projects_dir):
    """Two hand-written scenes with markup, a repeated title, a heading and a break."""
    root = projects_dir / "bell"
    create_project(root, {"name": "bell", "title": "The Bell & the <Tide>",
                          "author": "Ann O'Hara", "premise": "A bell rings under the sea."})
    bodies = [("The First Bell", "# The First Bell\n\nShe said *no* & he said **yes** <b>.\n\n"
                                 "A second paragraph\nwrapped on two lines."),
              ("Low Water", "## Interlude\n\nThe tide went out.\n\n***\n\nIt came back.")]
    for tick, (title, body) in enumerate(bodies, 1):
        scene = Scene(tick=tick, title=title, body=body, summary=["x"], words=9, tokens=9)
        atomic_write(root / "scenes" / f"scene_{tick:03d}.md", scene.render())
    Project(root).update_state(tick=len(bodies))
    return root


def styled(document, name: str) -> list:
    return [p for p in document.paragraphs if p.style.name == name]


@pytest.mark.parametrize(("words", "shown"), [
    (1, 100), (149, 100), (1_449, 1_400), (1_500, 1_500), (3_933, 4_000), (9_749, 9_500),
    (9_750, 10_000), (10_499, 10_000), (85_499, 85_000), (85_500, 86_000)])
def test_the_word_count_is_rounded_as_a_manuscript_gives_it(words, shown):
    assert rounded_words(words) == shown


def test_docx_is_a_manuscript_in_standard_format(book, tmp_path):
    out = tmp_path / "b.docx"
    result = export(Project(book), "docx", out, "every:5")
    assert "docx" in FORMATS and result.chapters == 3 and result.scenes == 12
    document = docx.Document(str(out))
    manuscript = collect(Project(book), None, "every:5")

    normal = document.styles["Normal"]
    assert (normal.font.name, normal.font.size) == ("Times New Roman", Pt(12))
    fonts = normal.element.rPr.rFonts
    assert {fonts.get(qn(f"w:{k}")) for k in ("ascii", "hAnsi", "eastAsia", "cs")} == \
        {"Times New Roman"}
    assert normal.paragraph_format.line_spacing_rule == WD_LINE_SPACING.DOUBLE
    assert normal.paragraph_format.space_after == Pt(0)
    for section in document.sections:
        assert (section.page_width, section.page_height) == (Inches(8.5), Inches(11))
        assert {section.top_margin, section.bottom_margin, section.left_margin,
                section.right_margin} == {Inches(1)}

    # the title page: contact block, the word count rounded, the title a third down
    title_page = styled(document, "Title Page")
    assert title_page[0].text == f"[Your Name]\tabout {rounded_words(manuscript.words):,} words"
    assert [p.text for p in title_page[1:5]] == ["[Street Address]", "[City, State ZIP]",
                                                 "[Phone]", "[Email]"]
    assert [p.text for p in title_page[5:]] == ["harbour", "by [Your Name]"]
    assert title_page[5].alignment == WD_ALIGN_PARAGRAPH.CENTER
    assert title_page[5].paragraph_format.space_before >= Inches(2)

    # the header: none on the title page; surname / title / PAGE from the text, from 1
    title_section, text_section = document.sections
    assert [p.text for p in title_section.header.paragraphs] == [""]
    header = text_section.header
    assert not header.is_linked_to_previous
    assert header.paragraphs[0].text == "[Surname] / harbour / "
    assert header.paragraphs[0].alignment == WD_ALIGN_PARAGRAPH.RIGHT
    field = header.paragraphs[0]._p.find(qn("w:fldSimple"))
    assert field is not None and field.get(qn("w:instr")) == "PAGE"
    numbers = text_section._sectPr.find(qn("w:pgNumType"))
    assert numbers is not None and numbers.get(qn("w:start")) == "1"
    kids = [child.tag for child in text_section._sectPr]
    assert kids.index(qn("w:pgNumType")) < kids.index(qn("w:cols"))     # the schema's order

    # each chapter on a new page (the first after the title page's section break)
    chapters = styled(document, "Chapter Title")
    assert [p.text for p in chapters] == [c.title for c in manuscript.chapters]
    assert [p.paragraph_format.page_break_before for p in chapters] == [False, True, True]
    assert document.styles["Chapter Title"].paragraph_format.alignment == WD_ALIGN_PARAGRAPH.CENTER
    assert chapters[0]._p.getprevious().find(qn("w:pPr")).find(qn("w:sectPr")) is not None

    # a centered # between the scenes of a chapter (and for a break inside one); END
    breaks = styled(document, "Scene Break")
    inside = sum(b.kind == "break" for s in manuscript.scenes for b in blocks(s.body, s.title))
    assert [p.text for p in breaks] == ["#"] * (12 - 3 + inside) + ["END"]
    assert document.styles["Scene Break"].paragraph_format.alignment == WD_ALIGN_PARAGRAPH.CENTER

    # the prose: every paragraph of every scene in order, first lines indented, no titles
    text = styled(document, "Manuscript Text")
    assert document.styles["Manuscript Text"].paragraph_format.first_line_indent == Inches(0.5)
    expected = [b.text for s in load_scenes(book / "scenes") for b in blocks(s.body, s.title)
                if b.kind == "p"]
    assert [p.text for p in text] == expected
    titles = {s.title for s in manuscript.scenes} - {c.title for c in manuscript.chapters}
    assert not titles & {p.text for p in document.paragraphs}
    assert all(not p.text.startswith(("tick:", "pov:", "summary:")) for p in text)


def test_docx_keeps_emphasis_and_names_the_author(handmade, tmp_path):
    out = tmp_path / "b.docx"
    export(Project(handmade), "docx", out, "none")
    document = docx.Document(str(out))
    assert document.sections[1].header.paragraphs[0].text == \
        "O'Hara / The Bell & the <Tide> / "
    title_page = [p.text for p in styled(document, "Title Page")]
    assert title_page[0] == "Ann O'Hara\tabout 100 words"
    assert title_page[-2:] == ["The Bell & the <Tide>", "by Ann O'Hara"]
    assert document.core_properties.author == "Ann O'Hara"
    paragraphs = [(p.style.name, p.text) for p in document.paragraphs
                  if p.style.name in ("Manuscript Text", "Scene Break", "Chapter Title")]
    assert paragraphs == [
        ("Chapter Title", "Scenes 1–2"),
        ("Manuscript Text", "She said no & he said yes <b>."),
        ("Manuscript Text", "A second paragraph wrapped on two lines."),
        ("Scene Break", "#"),
        ("Manuscript Text", "Interlude"),
        ("Manuscript Text", "The tide went out."),
        ("Scene Break", "#"),
        ("Manuscript Text", "It came back."),
        ("Scene Break", "END")]
    runs = [(r.text, r.italic, r.bold) for r in document.paragraphs[
        [p.text for p in document.paragraphs].index("She said no & he said yes <b>.")].runs]
    assert runs == [("She said ", None, None), ("no", True, None),
                    (" & he said ", None, None), ("yes", None, True), (" <b>.", None, None)]
    heading = next(p for p in document.paragraphs if p.text == "Interlude")
    assert heading.alignment == WD_ALIGN_PARAGRAPH.CENTER


def test_inline_runs_and_the_surname():
    assert inline_runs("a **b *c* d** _e_") == [("a ", False, False), ("b ", False, True),
                                                ("c", True, True), (" d", False, True),
                                                (" ", False, False), ("e", True, False)]
    assert surname("Ann O'Hara") == "O'Hara" and surname(" ") == "[Surname]"


def test_the_command_writes_it(book, tmp_path):
    result = invoke("export", "-p", str(book), "--format", "docx", "-o", str(tmp_path))
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0] == f"wrote {tmp_path / 'harbour.docx'}"
    assert (tmp_path / "harbour.docx").read_bytes()[:2] == b"PK"
