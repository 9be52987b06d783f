"""novel_agent.books.split: reading a manuscript and cutting it into scenes."""

from __future__ import annotations

import random
import re

import pytest

from novel_agent.books.export import export
from novel_agent.books.split import ManuscriptError, read_manuscript, split_manuscript, tokens
from novel_agent.files import atomic_write
from novel_agent.story.project.folder import Project, create_project
from novel_agent.story.scenes import Scene, load_scenes

WORD_RE = re.compile(r"[\w'’-]+")


def words(text):
    return WORD_RE.findall(text)


class Prose:
    """Paragraphs of numbered words (w1 w2 …), so a lost or doubled word shows."""

    def __init__(self):
        self.n = 0

    def sentence(self, length):
        out = []
        for _ in range(length):
            self.n += 1
            out.append(f"w{self.n}")
        return " ".join(out).capitalize() + "."

    def paragraph(self, sentences=4, length=10):
        return " ".join(self.sentence(length) for _ in range(sentences))

    def scene(self, paragraphs=3):
        return "\n\n".join(self.paragraph() for _ in range(paragraphs))


@pytest.fixture
def three_chapters():
    prose = Prose()
    s = [prose.scene() for _ in range(6)]
    text = (f"# Chapter 1: Arrival\n\n{s[0]}\n\n* * *\n\n{s[1]}\n\n"
            f"## Chapter Two: The Bell\n\n{s[2]}\n\n***\n\n{s[3]}\n\n---\n\n{s[4]}\n\n"
            f"CHAPTER III\n\n{s[5]}\n")
    return text, s


def test_three_chapters_with_scene_breaks(three_chapters):
    text, bodies = three_chapters
    scenes = split_manuscript(text)
    assert [(x.title, x.chapter) for x in scenes] == [
        ("Chapter 1: Arrival", 1), ("Chapter 1: Arrival (2)", 1),
        ("Chapter Two: The Bell", 2), ("Chapter Two: The Bell (2)", 2),
        ("Chapter Two: The Bell (3)", 2), ("CHAPTER III", 3)]
    assert [x.body for x in scenes] == bodies
    assert split_manuscript(text, mode="scenes") == scenes


def test_chapters_mode_keeps_breaks_inside_a_chapter(three_chapters):
    text, bodies = three_chapters
    scenes = split_manuscript(text, mode="chapters", max_words=10_000)
    assert [(x.title, x.chapter) for x in scenes] == [
        ("Chapter 1: Arrival", 1), ("Chapter Two: The Bell", 2), ("CHAPTER III", 3)]
    assert scenes[1].body == f"{bodies[2]}\n\n* * *\n\n{bodies[3]}\n\n* * *\n\n{bodies[4]}"


def test_a_long_chapter_splits_at_paragraph_boundaries():
    prose = Prose()
    paragraphs = [prose.paragraph(sentences=6) for _ in range(30)]      # 30 × 60 words
    text = "# Chapter 1\n\n" + "\n\n".join(paragraphs)
    scenes = split_manuscript(text, max_words=400)
    sizes = [len(words(x.body)) for x in scenes]
    assert len(scenes) >= 4 and max(sizes) <= 600 and sum(sizes) == 1800
    assert all(300 <= size <= 600 for size in sizes[:-1])               # near max_words
    assert [p for x in scenes for p in x.body.split("\n\n")] == paragraphs
    assert [x.title for x in scenes[:3]] == ["Chapter 1", "Chapter 1 (2)", "Chapter 1 (3)"]
    assert len(split_manuscript(text, mode="scenes")) == 1              # told: no length split


def test_one_huge_paragraph_splits_at_sentence_ends():
    prose = Prose()
    paragraph = prose.paragraph(sentences=150, length=10)                # 1,500 words
    scenes = split_manuscript(paragraph, max_words=400)
    assert len(scenes) >= 3
    assert all(len(words(x.body)) <= 600 and x.body.endswith(".") for x in scenes)
    assert words(" ".join(x.body for x in scenes)) == words(paragraph)
    assert [x.title for x in scenes][:2] == ["Scene 1", "Scene 2"]


@pytest.mark.parametrize("line, title", [
    ("# Chapter 3", "Chapter 3"),
    ("## Chapter Three: The Bell", "Chapter Three: The Bell"),
    ("CHAPTER IV", "CHAPTER IV"),
    ("Chapter 12. The Road", "Chapter 12. The Road"),
    ("Chapter Twenty-One", "Chapter Twenty-One"),
    ("Prologue", "Prologue"),
    ("### A Quiet Place ###", "A Quiet Place"),
])
def test_chapter_headings(line, title):
    assert tokens(f"{line}\n\nText.")[0] == ("heading", title)


@pytest.mark.parametrize("line", ["Chapter 3 of the law was clear.", "Part of me stayed.",
                                  "#hashtag", "Book one of many, she said."])
def test_prose_that_only_looks_like_a_heading(line):
    assert tokens(f"{line}\n\nText.") == [("para", line), ("para", "Text.")]


def test_heading_details():
    scenes = split_manuscript("CHAPTER IV\nThe Bell\n\nIt rang.\n")
    assert [(x.title, x.body) for x in scenes] == [("CHAPTER IV: The Bell", "It rang.")]
    gutenberg = split_manuscript("CHAPTER I.\nDown the Rabbit-Hole\n\nAlice was tired.\n")
    assert [x.title for x in gutenberg] == ["CHAPTER I: Down the Rabbit-Hole"]
    nested = split_manuscript("# Part One\n\n## Chapter 1\n\nFirst.\n\n## Chapter 2\n\nSecond.")
    assert [(x.title, x.chapter) for x in nested] == [("Part One — Chapter 1", 1),
                                                     ("Chapter 2", 2)]
    loose = split_manuscript("Before any heading.\n\n# One\n\nAfter.")
    assert [(x.title, x.chapter) for x in loose] == [("Scene 1", 1), ("One", 2)]


@pytest.mark.parametrize("seed", range(25))
def test_no_word_is_lost_or_doubled(seed):
    rng = random.Random(seed)
    prose = Prose()
    max_words = rng.randint(40, 300)
    parts, expected = [], []
    for _ in range(rng.randint(1, 30)):
        roll = rng.random()
        if roll < 0.1:
            parts.append(rng.choice(["# Chapter {n}", "## The {n}th", "CHAPTER {n}",
                                     "Chapter {n}: Name"]).format(n=rng.randint(1, 50)))
        elif roll < 0.2:
            parts.append(rng.choice(["***", "* * *", "---", "#", "___"]))
        else:
            paragraph = prose.paragraph(rng.randint(1, 40), rng.randint(3, 15))
            parts.append(paragraph)
            expected += words(paragraph)
    text = "\n\n".join(parts)
    for mode in ("auto", "chapters", "scenes"):
        scenes = split_manuscript(text, mode=mode, max_words=max_words)
        assert words(" ".join(x.body for x in scenes)) == expected, mode
        assert all(x.body.strip() and x.title for x in scenes)
        assert [x.chapter for x in scenes] == sorted(x.chapter for x in scenes)
        if mode != "scenes":
            assert all(len(words(x.body)) <= max_words * 1.5 for x in scenes), mode


def test_bad_mode_and_size():
    with pytest.raises(ManuscriptError, match="unknown split mode 'pages'"):
        split_manuscript("x", mode="pages")
    with pytest.raises(ManuscriptError, match="at least 1"):
        split_manuscript("x", max_words=0)


# -- reading ---------------------------------------------------------------------
def test_a_folder_reads_in_natural_order(tmp_path):
    for name, text in [("ch10.md", "# Ten\n\nten."), ("ch2.md", "# Two\n\ntwo."),
                       ("ch1.txt", "---\ntitle: One\n---\n\n# One\n\none."),
                       (".hidden.md", "# Hidden"), ("cover.png", "x")]:
        (tmp_path / name).write_text(text, encoding="utf-8")
    text = read_manuscript(tmp_path)
    assert "title:" not in text and "Hidden" not in text
    assert [x.title for x in split_manuscript(text)] == ["One", "Two", "Ten"]


def test_files_without_headings_still_break_between_files(tmp_path):
    (tmp_path / "a.md").write_text("\ufeffFirst file.", encoding="utf-8")
    (tmp_path / "b.md").write_text("Second file.", encoding="utf-8")
    assert [x.body for x in split_manuscript(read_manuscript(tmp_path))] == ["First file.",
                                                                             "Second file."]


def test_read_errors_name_the_file(tmp_path):
    (tmp_path / "ch1.md").write_text("fine", encoding="utf-8")
    (tmp_path / "ch3.md").write_bytes(b"caf\xe9 au lait")
    with pytest.raises(ManuscriptError, match=r"ch3\.md: not UTF-8 text \(byte 0xe9 at offset 3"):
        read_manuscript(tmp_path)
    with pytest.raises(ManuscriptError, match="no such file"):
        read_manuscript(tmp_path / "missing.md")
    (tmp_path / "book.docx").write_bytes(b"PK")
    with pytest.raises(ManuscriptError, match=r"book\.docx: not a \.md or \.txt file"):
        read_manuscript(tmp_path / "book.docx")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ManuscriptError, match="no .md or .txt files"):
        read_manuscript(tmp_path / "empty")


def test_an_exported_book_splits_back_into_its_scenes(projects_dir, tmp_path):
    root = projects_dir / "loop"
    create_project(root, {"name": "loop", "premise": "A premise."})
    prose = Prose()
    for tick in range(1, 5):
        body = f"# Scene title {tick}\n\n{prose.scene()}"
        atomic_write(root / "scenes" / f"scene_{tick:03d}.md",
                     Scene(tick=tick, title=f"Scene title {tick}", body=body).render())
    out = export(Project(root), "md", tmp_path / "loop.md", "every:1").path
    scenes = split_manuscript(read_manuscript(out), max_words=10_000)
    originals = load_scenes(root / "scenes")
    assert [x.title for x in scenes] == ["loop", *(s.title for s in originals)]
    assert scenes[0].body == "A premise."                                # the title page
    assert [words(x.body) for x in scenes[1:]] == [words(s.body)[3:] for s in originals]
