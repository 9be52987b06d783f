"""`novel style learn|show` and `novel new --style-sample`: the book's style.yaml from a
sample, never written over without asking, its avoid list, the author's comments and its
key order kept when measured again."""

from __future__ import annotations

import re

import yaml

from tests.story.test_style import SAMPLE


def sample(tmp_path, name="mine.md", text=None):
    path = tmp_path / name
    path.write_text(text if text is not None else "\n\n".join(SAMPLE))
    return path


def test_learn_writes_style_yaml_and_says_what_the_writer_is_told(cli, project, tmp_path):
    out = cli("style", "learn", str(sample(tmp_path)), "-p", "harbour").output
    assert out.startswith("wrote harbour/style.yaml from 1 file; the writer is told:\n"
                          "  Tell it in the first person, present tense.\n  Sentences of about")
    style = yaml.safe_load((project.root / "style.yaml").read_text())
    assert style["person"] == "first" and "ledger" in style["distinctive"]
    shown = cli("style", "show", "-p", "harbour").output
    assert shown.startswith("# The book's style, measured by `novel style learn` from mine.md")
    assert "\nThe writer is told:\n  Tell it in the first person, present tense.\n" in shown
    assert shown.rstrip().endswith("words).")          # and the sample passage (N words).


def test_learn_does_not_write_over_a_style_and_replace_keeps_its_avoid_list(cli, project,
                                                                            tmp_path):
    path = project.root / "style.yaml"
    path.write_text("tense: past\navoid: [the tide waits for no one]\n")
    refused = cli("style", "learn", str(sample(tmp_path)), "-p", "harbour", ok=False)
    assert refused.output == (f"Error: {path} exists: `novel style learn --replace` measures "
                              "the sample again over it (its avoid list is kept)\n")
    assert path.read_text() == "tense: past\navoid: [the tide waits for no one]\n"
    cli("style", "learn", "--replace", str(sample(tmp_path)), "-p", "harbour")
    style = yaml.safe_load(path.read_text())
    assert style["tense"] == "present" and style["avoid"] == ["the tide waits for no one"]


def test_replace_keeps_the_authors_comments_and_key_order(cli, project, tmp_path):
    old = sample(tmp_path, "old.md", "She walked to the pier. The sea was loud, and the lamp "
                 "swung.\n\n\"Who goes there?\" she said. Nobody answered her.\n" * 4)
    cli("style", "learn", str(old), "-p", "harbour")
    path = project.root / "style.yaml"
    text = path.read_text()
    avoid = next(line for line in text.splitlines() if line.startswith("avoid:"))
    path.write_text("# mine: at the top\n" + text.replace(avoid + "\n", "").replace(
        "person:", "avoid: [the tide waits for no one]   # mine: my own\nperson:").replace(
        "tense: past", "tense: past  # mine: always").replace(
        "# a passage", "# mine: above the sample\n# a passage"))
    order = list(yaml.safe_load(path.read_text()))
    cli("style", "learn", "--replace", str(sample(tmp_path)), "-p", "harbour")
    text = path.read_text()
    assert re.findall(r"# mine: [a-z]+(?: [a-z]+)*", text) == [
        "# mine: at the top", "# mine: my own", "# mine: always", "# mine: above the sample"]
    assert text.startswith("# mine: at the top\n# The book's style, measured by `novel style "
                           "learn` from mine.md\n")
    assert "\ntense: present  # mine: always    # past or present\n" in text
    style = yaml.safe_load(text)
    assert list(style) == order and style["avoid"] == ["the tide waits for no one"]
    assert style["person"] == "first" and "ledger" in style["distinctive"]


def test_a_file_that_holds_no_prose_is_named_and_nothing_is_written(cli, project, tmp_path):
    empty = sample(tmp_path, "empty.md", "---\ntitle: x\n---\n\n")
    result = cli("style", "learn", str(empty), "-p", "harbour", ok=False)
    assert result.output == f"Error: {empty}: holds no prose to measure\n"
    assert not (project.root / "style.yaml").exists()


def test_show_without_a_style_and_with_a_broken_one(cli, project):
    assert cli("style", "show", "-p", "harbour").output.startswith("no style yet: `novel style "
                                                                   "learn FILE…`")
    (project.root / "style.yaml").write_text("person: third\ndialogue_share: lots\n")
    broken = cli("style", "show", "-p", "harbour", ok=False).output
    assert broken == (f"Error: {project.root / 'style.yaml'}:2: 'dialogue_share' must be a "
                      "share from 0 to 1: fix the value or remove the line\n")


def test_new_with_a_style_sample_learns_it_at_creation(cli, projects_dir, tmp_path):
    out = cli("new", "quay", "--premise", "A ferryman keeps a ledger.", "--provider", "offline",
              "--style-sample", str(sample(tmp_path))).output
    assert "Learned its style from mine.md: style.yaml (novel style show)." in out
    style = yaml.safe_load((projects_dir / "quay" / "style.yaml").read_text())
    assert style["tense"] == "present" and style["sample"]
    missing = cli("new", "other", "--style-sample", str(tmp_path / "nope.md"), ok=False)
    assert "does not exist" in missing.output and not (projects_dir / "other").exists()
