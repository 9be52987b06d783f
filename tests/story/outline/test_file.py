"""outline/outline.yaml: read, checked field by field (an error names the file, the line
and the key), written atomically so that it reads back as itself (over the author's file,
its comments and layout kept); chapters spread over acts."""

from __future__ import annotations

from dataclasses import replace

import pytest

from novel_agent.errors import OutlineError
from novel_agent.story.outline.file import (
    load_outline,
    outline_path,
    parse_outline,
    render_outline,
    save_outline,
    spread,
)

OUTLINE = """\
arc:
  summary: A keeper finds a drowned man's map.
  ending: She follows it to the drawn door and shuts it for good.
acts:
  - name: The Finding
    summary: The map comes ashore.
    chapters:
      - number: 1
        title: The Drowned Man
        purpose: Set the story going.
        scenes: 3
        beats:
          - what: Mara finds the map.
            tension: 3
          - id: 1.10
            what: She reads it by the lamp.
            locked: true
  - name: The Door
    locked: true
    chapters:
      - title: The Drawn Door
        scenes: 2
        beats:
          - what: She opens the door.
"""


def test_an_outline_reads_as_written_and_back_again(tmp_path):
    outline = parse_outline(OUTLINE, "outline.yaml")
    assert outline.arc.ending.startswith("She follows it")
    first, second = outline.chapters()
    assert (first.number, first.title, first.scenes, second.number, second.purpose) == \
        (1, "The Drowned Man", 3, 2, "")
    assert [(b.id, b.tension, b.locked) for b in outline.beats()] == \
        [("1.1", 3, False), ("1.10", None, True), ("2.1", None, False)]
    assert outline.acts[1].locked and not outline.acts[0].locked
    assert outline.describe() == "2 acts, 2 chapters, 3 beats, 5 scenes planned"
    path = outline_path(tmp_path / "harbour")
    save_outline(path, outline)                      # its folder made when missing
    assert load_outline(path) == outline
    assert render_outline(outline).startswith("# The book's outline")
    assert "id: '1.10'" in path.read_text()        # quoted: it reads back as text
    assert [p.name for p in path.parent.iterdir()] == ["outline.yaml"]   # no temp file left


def test_saved_over_the_authors_file_the_outline_keeps_its_comments_and_layout(tmp_path):
    path = outline_path(tmp_path / "harbour")
    path.parent.mkdir(parents=True)
    path.write_text("# my book, by hand\n" + OUTLINE.replace(
        "        title: The Drowned Man\n", "        title: The Drowned Man   # a working title\n")
        .replace("  - name: The Door\n", "  # the last act\n  - name: The Door\n") + "# the end\n")
    outline = load_outline(path)
    first = outline.chapters()[0]
    changed = replace(outline, acts=(replace(outline.acts[0], chapters=(
        replace(first, title="The Salt Man", scenes=4),)), outline.acts[1]))
    save_outline(path, changed)
    assert path.read_text() == """\
# my book, by hand
arc:
  summary: A keeper finds a drowned man's map.
  ending: She follows it to the drawn door and shuts it for good.
acts:
  - name: The Finding
    summary: The map comes ashore.
    chapters:
      - number: 1
        title: The Salt Man   # a working title
        purpose: Set the story going.
        scenes: 4
        beats:
          - id: '1.1'
            what: Mara finds the map.
            tension: 3
          - id: '1.10'
            what: She reads it by the lamp.
            locked: true
  # the last act
  - name: The Door
    summary: ''
    locked: true
    chapters:
      - number: 2
        title: The Drawn Door
        purpose: ''
        scenes: 2
        beats:
          - id: '2.1'
            what: She opens the door.
# the end
"""
    assert load_outline(path) == changed
    save_outline(path, outline, fresh=True)          # a new outline: a new file
    assert path.read_text() == render_outline(outline)


def test_a_book_without_an_outline_has_none(tmp_path):
    assert load_outline(outline_path(tmp_path)) is None
    assert not (tmp_path / "outline").exists()


def test_a_beat_without_an_id_takes_its_place_or_the_next_one_free():
    text = OUTLINE.replace("          - id: 1.10\n", "          - id: 1.1\n")
    outline = parse_outline(text, "outline.yaml")
    assert [b.id for b in outline.beats()] == ["1.2", "1.1", "2.1"]


@pytest.mark.parametrize(("old", "new", "line", "key", "said"), [
    ("tension: 3", "tension: 12", 14, "tension",
     "act 1, chapter 1, beat 1: 'tension' must be a whole number from 0 to 10, not 12"),
    ("what: She opens", "whta: She opens", 24, "whta",
     "act 2, chapter 2, beat 1: 'whta' is not a key here (keys: id, what, tension, locked)"),
    ("id: 1.10", "id: 1.1\n            tension: 2\n            tension: 4", 17, "tension",
     "'tension' is given twice (first on line 16)"),
    ("      - title: The Drawn Door", "      - number: 3\n        title: The Drawn Door", 21,
     "number", "act 2, chapter 2: 'number' is 3, but this is chapter 2"),
    ("id: 1.10", "id: x", 15, "id", "'id' must be a chapter and a beat number, like '3.2'"),
    ("          - what: She opens", "          - id: '1.10'\n            what: She opens", 24,
     "id", "'1.10' is also the id of the beat on line 15"),
    ("    locked: true\n    chapters:", "    locked: yes please\n    chapters:", 19, "locked",
     "act 2: 'locked' must be true or false, not 'yes please'"),
    ("        scenes: 2\n", "", 21, "scenes",
     "'scenes' must be a whole number from 1 to 1000 (it is missing)"),
    ("  ending: She follows it to the drawn door and shuts it for good.\n", "", 1, "ending",
     "arc: 'ending' is missing: it must be text"),
    ("        title: The Drowned Man", "        title: [The, Drowned]", 9, "title",
     "act 1, chapter 1: 'title' must be text (quote it)"),
    ("acts:\n", "actz:\n", 4, "actz", "'actz' is not a key here (keys: arc, acts)"),
    ("        scenes: 3", "        scenes: [3", 11, None, "the '[' opened here is never closed"),
])
def test_a_bad_field_is_named_with_its_file_line_and_key(old, new, line, key, said):
    assert old in OUTLINE
    with pytest.raises(OutlineError) as caught:
        parse_outline(OUTLINE.replace(old, new, 1), "outline/outline.yaml")
    error = caught.value
    assert (error.file, error.line, error.key) == ("outline/outline.yaml", line, key)
    assert str(error).startswith(f"outline/outline.yaml:{line}: ") and said in str(error)
    assert "\n" not in str(error)


@pytest.mark.parametrize(("text", "said"), [
    ("", "the outline is empty"), ("arc: x\nacts: []\n", "arc: must be a mapping"),
    ("arc: {summary: a story, ending: its end}\nacts: []\n",
     "'acts' must be a list with at least one entry"),
    ("arc: {summary: a story, ending: its end}\nacts:\n  - name: One\n    chapters: []\n",
     "act 1: 'chapters' must be a list with at least one entry"),
])
def test_an_outline_missing_its_parts_is_refused(text, said):
    with pytest.raises(OutlineError, match=said):
        parse_outline(text, "outline.yaml")


def test_a_file_that_is_not_utf8_says_so(tmp_path):
    path = outline_path(tmp_path)
    path.parent.mkdir()
    path.write_bytes(OUTLINE.encode() + b"\xff\n")
    with pytest.raises(Exception, match="not UTF-8"):
        load_outline(path)


@pytest.mark.parametrize(("total", "parts", "counts"), [
    (4, 3, [1, 2, 1]), (24, 3, [8, 8, 8]), (5, 3, [2, 2, 1]), (7, 5, [1, 2, 2, 1, 1]),
    (3, 3, [1, 1, 1]), (10, 1, [10])])
def test_chapters_spread_over_the_acts_the_middle_ones_first(total, parts, counts):
    assert spread(total, parts) == counts and sum(counts) == total
