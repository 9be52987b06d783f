"""Issue 10, defects 5-8: every fault is one line naming the file (and line) and what to
do, exit 1, nothing changed; bad input is refused at the door; the user is told."""

from __future__ import annotations

import errno
import re
import sqlite3

import pytest

from novel_agent.errors import ConfigError, ModelError
from tests.support.clirunner import invoke
from tests.support.scripted import ScriptedModel
from tests.support.ticking import run_ticks


def one_line_error(result, *parts):
    """Exit 1, one line on stderr, no traceback, each of `parts` in it."""
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    lines = [l for l in result.stderr.strip().splitlines() if not l.startswith("note: ")]
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    for part in parts:
        assert part in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def ticked(project):
    run_ticks(project, 2)
    return project


# -- defect 5: raw tracebacks become one line --------------------------------------------


def test_a_garbage_index_is_rebuilt_with_a_notice(ticked):
    ticked.index_db.write_bytes(b"this is not a database at all" * 100)
    result = invoke("tick", "-p", "harbour")
    assert result.exit_code == 0, result.output
    assert "index.db was unreadable" in result.output and "rebuilt" in result.output
    assert ticked.tick() == 3
    ledger = (ticked.novel_dir / "usage.jsonl").read_text().splitlines()
    restored = int(re.search(r"(\d+) usage rows restored from usage.jsonl", result.output)[1])
    assert restored == len(ledger) - 3 > 0          # ticks 1-2 restored; tick 3 then added
    with sqlite3.connect(ticked.index_db) as db:
        assert db.execute("SELECT count(*) FROM usage").fetchone()[0] == len(ledger)


@pytest.mark.parametrize("file,old,new,where,what", [
    ("characters", "last_seen: ", "last_seen: soon #", None, "'last_seen' must be a tick"),
    ("loops.yaml", None, "loops:\n- id: x\n  description: d\n  scenes: x\n", 4,
     "'scenes' must be a list of tick numbers"),
    ("relationships.yaml", None, "relationships:\n- a: 1\n  b: Mara\n  kind: friends\n", 2,
     "'a' must be text"),
    ("facts.yaml", None, "facts:\n- text: [a]\n  scene: 1\n", 2, "'text' must be text"),
    ("loops/x.yaml", None, "description: d\nscenes: x\n", 2,
     "'scenes' must be a list of tick numbers"),
    ("relationships/mara--x.yaml", None, "a: Mara\nb: 1\nkind: friends\n", 2,
     "'b' must be text"),
])
def test_wrong_typed_memory_values_name_file_and_line(ticked, snapshot, file, old, new, where,
                                                       what):
    if file == "characters":
        path = next((ticked.memory_dir / "characters").glob("*.yaml"))
        text = path.read_text()
        path.write_text(text.replace(old, new, 1))
        where = next(n for n, l in enumerate(path.read_text().splitlines(), 1)
                     if l.startswith("last_seen"))
    else:
        path = ticked.memory_dir / file
        path.write_text(new)
    before = snapshot(ticked.root)
    one_line_error(invoke("tick", "-p", "harbour"), f"{path}:{where}:", what)
    assert snapshot(ticked.root) == before


@pytest.mark.parametrize("text,line,what", [
    ("tick: soon\n", 1, "'tick' must be a whole number"),
    ("tick: 2\npending_checkpoints: x\n", 2, "'pending_checkpoints' must be a list"),
    ("- 1\n", 1, "expected a mapping"),
])
def test_wrong_typed_state_yaml_says_how_to_rebuild_it(ticked, snapshot, text, line, what):
    ticked.state_file.write_text(text)
    before = snapshot(ticked.root)
    one_line_error(invoke("tick", "-p", "harbour"), f"state.yaml:{line}:", what,
                   "novel doctor --fix")
    assert snapshot(ticked.root) == before


@pytest.mark.parametrize("name", ["steer.md", ".novel/state.yaml"])
def test_a_file_that_is_not_utf8_is_named(ticked, snapshot, name):
    (ticked.root / name).write_bytes(b"tick: 2\n# caf\xe9 au lait\n")
    before = snapshot(ticked.root)
    one_line_error(invoke("tick", "-p", "harbour"), f"{name}:2: not UTF-8 text (byte 0xe9)",
                   "re-save the file as UTF-8")
    assert snapshot(ticked.root) == before


def test_disk_full_is_blamed_on_the_disk(ticked, snapshot, monkeypatch):
    import novel_agent.files as files
    real = files.os.fsync

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device", "scenes/scene_003.md")

    before = snapshot(ticked.root)
    monkeypatch.setattr(files.os, "fsync", full)
    monkeypatch.setattr("novel_agent.index.db.Index.flush", lambda self: (_ for _ in ()).throw(
        sqlite3.OperationalError("database or disk is full")))
    line = one_line_error(invoke("tick", "-p", "harbour"), "the disk is full")
    assert "sqlite" not in line
    monkeypatch.setattr(files.os, "fsync", real)
    after = snapshot(ticked.root)
    assert {k: v for k, v in after.items() if not k.startswith(".novel/txn")} == before


def test_a_read_only_project_as_the_disk_says_it(ticked, monkeypatch):
    """What EROFS/EACCES from any write becomes (root cannot make a folder read-only)."""
    import novel_agent.files as files

    def refuse(*a, **k):
        raise PermissionError(errno.EACCES, "Permission denied", str(ticked.scenes_dir))

    monkeypatch.setattr(files, "new_temp", refuse)
    one_line_error(invoke("tick", "-p", "harbour"), f"{ticked.scenes_dir}: permission denied",
                   "make the project writable")


def test_a_300_character_name_is_refused(projects_dir):
    result = invoke("new", "x" * 300)
    assert result.exit_code == 2 and "up to 100 letters" in result.output
    assert list(projects_dir.iterdir()) == []


@pytest.mark.parametrize("body,what", [
    ("{% for i in range(10**9) %}x{% endfor %}", "range of 1,000,000,000 items is too large"),
    ("{{ 'x' * 10**9 }}", "too large for a template"),
    ("{% for i in range(99999) %}{{ 'y' * 99 }}{% endfor %}", "more than 2,000,000 characters"),
])
def test_a_template_that_overflows_stops_before_any_call(ticked, snapshot, body, what):
    (ticked.templates_dir).mkdir()
    (ticked.templates_dir / "extract.j2").write_text(body)
    before = snapshot(ticked.root)
    model = ScriptedModel()    # nothing queued: any call would fail the test loudly
    with pytest.raises(ConfigError) as info:
        run_ticks(ticked, 1, model)
    assert what in str(info.value) and info.value.file == str(ticked.templates_dir / "extract.j2")
    assert model.requests == [] and snapshot(ticked.root) == before


# -- defect 6: a failure after the commit ----------------------------------------------


def test_disk_full_after_the_commit_says_the_tick_landed(ticked, monkeypatch):
    def full(self):
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr("novel_agent.index.db.Index.flush", full)
    line = one_line_error(invoke("tick", "-p", "harbour"), "tick 3 is committed (scenes/"
                          "scene_003.md); what failed after it:", "the disk is full")
    assert "index.db" in line
    assert ticked.scene_path(3).is_file() and ticked.tick() == 3


# -- defect 7: silence where the user must be told -------------------------------------


def test_a_summarizer_failure_says_the_checkpoint_is_pending(project):
    project.project_file.write_text(project.project_file.read_text()
                                    + "generation:\n  checkpoint_summary_interval: 2\n")
    run_ticks(project, 1)
    from novel_agent.cli.tick import stage_line
    model = ScriptedModel().fail("summarizer", ModelError("HTTP 503: overloaded"))
    (result,) = run_ticks(project, 1, model, offline_seed=0)
    line = stage_line(result.summary)
    assert "warning: checkpoint 2 is pending: the summarizer failed: HTTP 503: overloaded" in line


def test_temp_files_of_killed_writes_are_removed_and_said(ticked):
    leftovers = [ticked.novel_dir / "txn" / ".0001.staged.abc123.tmp",
                 ticked.summaries_dir / ".checkpoint_010.md.x1y2.tmp",
                 ticked.scenes_dir / ".scene_003.md.q9.tmp"]
    for path in leftovers:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("half")
    result = invoke("status", "-p", "harbour")
    assert "note: removed 3 temporary files left by an interrupted write" in result.output
    assert not any(p.exists() for p in leftovers)


def test_status_reports_an_interrupted_commit_and_counts_right(ticked):
    import json

    from novel_agent.files import atomic_write
    txn_dir = ticked.novel_dir / "txn"
    txn_dir.mkdir(exist_ok=True)
    atomic_write(txn_dir / "0000.staged", "---\ntitle: Three\n---\n\nThe third.\n")
    atomic_write(txn_dir / "journal.json", json.dumps(
        [{"staged": "0000.staged", "target": "scenes/scene_003.md"}]))
    result = invoke("status", "-p", "harbour")
    assert "note: recovered: the commit of tick 3 was interrupted and has been finished" \
        in result.output
    assert "ticks       3  (3 scenes" in result.output


# -- defect 8: input checked at the door -----------------------------------------------


def test_a_preset_is_a_name_never_a_path(projects_dir):
    result = invoke("new", "a", "--preset", "../configs/balanced")
    one_line_error(result, "'../configs/balanced' is not a preset name")
    assert list(projects_dir.iterdir()) == []


def test_new_refuses_a_preset_whose_values_are_invalid(projects_dir, tmp_path, monkeypatch):
    presets = tmp_path / "presets"
    presets.mkdir()
    (presets / "broken.yaml").write_text("generation:\n  checkpoint_summary_interval: 0\n")
    monkeypatch.setattr("novel_agent.config.layers.config_dir", lambda: presets)
    one_line_error(invoke("new", "a", "--preset", "broken"), "broken.yaml:2:",
                   "checkpoint_summary_interval")
    assert list(projects_dir.iterdir()) == []


def test_a_story_key_of_the_wrong_type_names_its_line(ticked, snapshot):
    ticked.project_file.write_text(ticked.project_file.read_text().replace(
        "premise: ", "premise: [a, b]\nold_premise: ").replace("old_premise", "# was"))
    text = ticked.project_file.read_text()
    line = next(n for n, l in enumerate(text.splitlines(), 1) if l.startswith("premise"))
    before = snapshot(ticked.root)
    one_line_error(invoke("tick", "-p", "harbour"), f"project.yaml:{line}:",
                   "'premise' must be text")
    assert snapshot(ticked.root) == before


def test_an_unknown_preset_in_project_yaml_names_the_file_and_line(ticked):
    text = ticked.project_file.read_text().replace("preset: balanced", "preset: balancd")
    ticked.project_file.write_text(text)
    line = next(n for n, l in enumerate(text.splitlines(), 1) if l.startswith("preset"))
    one_line_error(invoke("tick", "-p", "harbour"), f"project.yaml:{line}:",
                   "unknown preset 'balancd'")
