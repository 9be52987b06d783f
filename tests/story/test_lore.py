"""The lorebook: entries fire by key, always, by regex; priority under a tight share;
malformed files are named and skipped; `novel lore add|list|show|check`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from novel_agent.story.decisions import Plan
from novel_agent.story.lore import load_lorebook, parse_lore
from tests.support.planted import plan_answer
from tests.support.scripted import ScriptedModel
from tests.support.ticking import run_ticks


def write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def entries(text: str, name: str = "x.yaml"):
    return parse_lore(text, Path(name))


# ---------------------------------------------------------------- firing (pure)


def test_a_key_fires_as_a_whole_word_or_phrase_in_any_case():
    (entry,), problems = entries("keys: [compass, brass locket]\ncontent: It points home.\n")
    assert problems == []
    assert entry.fires(["She took the Compass out."]) == "key 'compass'"
    assert entry.fires(["the brass\nlocket lay there"]) == "key 'brass locket'"
    assert entry.fires(["compassion", "a locket of brass"]) == ""


def test_case_sensitive_and_regex_keys():
    (entry,), _ = entries("keys: [Order]\ncontent: The Order.\ncase_sensitive: true\n")
    assert entry.fires(["the Order met"]) and not entry.fires(["in order to"])
    (rx,), _ = entries("keys: ['ship(wright)?s?\\b']\ncontent: Ships.\nregex: true\n")
    assert rx.fires(["the shipwrights came"]) and rx.fires(["a ship"])
    assert not rx.fires(["shipping"])


def test_always_fires_without_keys_and_priority_orders_what_fired():
    book = load_lorebook(Path("/nonexistent"))
    assert book.entries == [] and book.problems == []
    (a,), _ = entries("content: The island has no trees.\nalways: true\npriority: 1\n", "a.yaml")
    (b,), _ = entries("keys: [tree]\ncontent: Trees.\npriority: 9\n", "b.yaml")
    (c,), _ = entries("keys: [lamp]\ncontent: Lamps.\npriority: 5\n", "c.yaml")
    from novel_agent.story.lore import Lorebook
    fired = Lorebook([a, b, c]).fired(["a tree by the lamp"])
    assert [(e.key, why) for e, why in fired] == [("b", "key 'tree'"), ("c", "key 'lamp'"),
                                                 ("a", "always")]


@pytest.mark.parametrize("text, line, says", [
    ("keys: [x\ncontent: 3\n", 1, "invalid YAML: the '[' opened here is never closed"),
    ("- keys: [a]\n  content: fine\n- keys: [b]\n  contnt: typo\n", 4, "unknown field 'contnt'"),
    ("keys: [a]\ncontent: ok\npriority: high\n", 3, "'priority' must be a whole number"),
    ("keys: ['(']\ncontent: ok\nregex: true\n", 1, "key '(' is not a valid regular expression"),
    ("keys: [ok, '(a)\\1']\ncontent: ok\nregex: true\n", 1,
     "key '(a)\\1' is not supported (invalid escape sequence: \\1): use a plain key or a "
     "simpler pattern"),
    ("content: ok\nregex: true\nkeys:\n  - '(?<!Mr )Quill'\n", 3,
     "key '(?<!Mr )Quill' is not supported (invalid perl operator: (?<!)"),
    ("content: no keys\n", 1, "would never fire"),
    ("keys: [a]\ncontent: ''\n", 2, "'content' must be"),
    ("just a sentence\n", 1, "expected a mapping"),
])
def test_a_malformed_entry_is_named_with_its_file_and_line_and_skipped(text, line, says):
    good, problems = entries(text, "lore/bad.yaml")
    assert len(problems) == 1
    assert problems[0].startswith(f"lore/bad.yaml:{line}: ") and says in problems[0]
    assert "skipped" in problems[0]
    assert len(good) == (1 if text.startswith("- keys: [a]") else 0)


# ---------------------------------------------------------------- in the tick


def plan(intention: str) -> Plan:
    return Plan(title="The lamp", intention=intention, pov="Mara Quill",
                location="The harbour", characters=["Mara Quill"])


def test_fired_lore_reaches_the_writer_and_a_broken_file_is_a_warning(project):
    lore = project.lore_dir
    write(lore, "compass.yaml", "name: The compass\nkeys: [compass]\n"
                                "content: The compass points to the sealed room.\n")
    write(lore, "tide.yaml", "keys: [tide]\ncontent: The tide turns at midnight.\n")
    write(lore, "broken.yaml", "keys: [x\n")
    model = ScriptedModel().add("planner", plan_answer(plan("Mara reads the compass.")))
    (result,) = run_ticks(project, 1, model, offline_seed=1)
    writer = "\n".join(m["content"] for m in model.calls("writer")[0].messages)
    assert "The compass: The compass points to the sealed room." in writer
    assert "The tide turns" not in writer
    lore_section = next(s for s in result.reports["writer"]["sections"] if s["name"] == "lore")
    assert lore_section["items"] == ["lore:compass"]
    assert any("broken.yaml:1: invalid YAML" in w and "skipped" in w for w in result.warnings)


def test_under_a_tight_share_the_higher_priority_entry_goes_in(project):
    lore = project.lore_dir
    long = "it is a long story, " * 12     # one sentence: no leaner form to fall back on
    write(lore, "low.yaml", f"keys: [lamp]\ncontent: '{long}Low.'\npriority: 1\n")
    write(lore, "high.yaml", f"keys: [lamp]\ncontent: '{long}High.'\npriority: 9\n")
    project.project_file.write_text(project.project_file.read_text() +
                                    "context:\n  cast_share: 0.01\n  max_prompt_tokens: 12000\n")
    model = ScriptedModel().add("planner", plan_answer(plan("Mara lights the lamp.")))
    (result,) = run_ticks(project, 1, model, offline_seed=1)
    items = {i["key"]: i for i in result.reports["writer"]["items"] if i["section"] == "lore"}
    assert items["lore:high"]["included"] and not items["lore:low"]["included"]
    assert items["lore:low"]["reason"].startswith("over the lore share")


def test_the_planner_sees_lore_fired_by_the_note(project):
    write(project.lore_dir, "storm.yaml", "keys: [storm]\ncontent: Storms cut the island off.\n")
    project.steer_file.write_text("Bring a storm ashore.\n")
    model = ScriptedModel(None)
    (result,) = run_ticks(project, 1, model, offline_seed=2)
    planner = "\n".join(m["content"] for m in model.calls("planner")[0].messages)
    assert "storm: Storms cut the island off." in planner


# ---------------------------------------------------------------- the CLI


def test_lore_add_list_show_check(project, cli):
    p = str(project.root)
    out = cli("lore", "add", "The brass locket", "--key", "locket", "--key", "brass locket",
              "--content", "Edda's mother's locket.", "--priority", "4", "-p", p).output
    assert out == "wrote harbour/lore/the_brass_locket.yaml\n"
    assert cli("lore", "add", "The brass locket", "--content", "again", "--always", "-p", p,
               ok=False).exit_code == 1
    write(project.lore_dir, "bell.yaml", "keys: [bell]\ncontent: The bell rings at noon.\n"
                                         "always: true\n")
    assert cli("lore", "list", "-p", p).output.splitlines() == [
        "   4  the_brass_locket     The brass locket               locket, brass locket",
        "   0  bell                 bell                           always"]
    shown = cli("lore", "show", "sextant", "-p", p, ok=False)
    assert shown.exit_code == 1 and "no lore entry 'sextant'" in shown.output
    assert cli("lore", "show", "locket", "-p", p).output == \
        cli("lore", "show", "the brass locket", "-p", p).output
    shown = cli("lore", "show", "the_brass_locket", "-p", p).output
    assert shown.splitlines()[0].startswith("The brass locket  (")
    assert shown.rstrip().endswith("Edda's mother's locket.")
    assert cli("lore", "check", "-p", p).output == "2 lore entries, all valid\n"
    write(project.lore_dir, "worse.yaml", "keys: [a]\ncontent: x\nalways: maybe\n")
    bad = cli("lore", "check", "-p", p, ok=False)
    assert bad.exit_code == 1
    assert "worse.yaml:3: 'always' must be true or false, not 'maybe'" in bad.output


HANGS = "(\\w+\\s?)+$"      # catastrophic backtracking under Python's re on one sentence


def test_a_regex_key_cannot_hang_a_tick(project, cli):
    # issue 37: such a key passed `lore check`, then every tick spun at 100% CPU
    write(project.lore_dir, "names.yaml", f"keys: ['{HANGS}']\ncontent: Names end lines.\n"
                                          "regex: true\n")
    assert cli("lore", "check", "-p", str(project.root)).output == "1 lore entry, valid\n"
    (entry,) = load_lorebook(project.lore_dir).entries
    assert entry.fires(["Mara Quill"]) == f"key '{HANGS}'"                 # it still matches
    project.steer_file.write_text("Mara Quill climbs the lamp room stairs at dusk.\n")
    # a tick in a process of its own, so that a hang fails the test instead of the suite
    done = subprocess.run([sys.executable, "-c", "from novel_agent.cli import main; main()",
                           "tick", "-p", str(project.root)], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert "tick 1" in done.stdout
