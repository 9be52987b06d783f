"""The one writer: atomic writes, front matter, transactions and their recovery."""

from __future__ import annotations

import json

import pytest

from novel_agent.errors import FileFormatError
from novel_agent.files import atomic_write, parse_front_matter, read_yaml, render_front_matter
from novel_agent.story.project.journal import Cut, Transaction, recover


def test_atomic_write_replaces_and_leaves_no_temp(tmp_path):
    path = tmp_path / "a" / "b.txt"
    atomic_write(path, "one")
    atomic_write(path, "two")
    assert path.read_text() == "two"
    assert [p.name for p in path.parent.iterdir()] == ["b.txt"]


def test_front_matter_round_trip():
    text = render_front_matter({"tick": 3, "summary": ["a: b", "c"]}, "Prose.\n\nMore.")
    meta, body = parse_front_matter(text)
    assert meta == {"tick": 3, "summary": ["a: b", "c"]}
    assert body == "Prose.\n\nMore."


def test_unclosed_front_matter_names_the_file():
    with pytest.raises(FileFormatError, match="scene_001.md"):
        parse_front_matter("---\ntick: 1\nProse", path="scene_001.md")


def test_broken_yaml_names_file_and_line(tmp_path):
    path = tmp_path / "x.yaml"
    path.write_text("a: 1\nb: [1,\n")
    with pytest.raises(FileFormatError) as info:
        read_yaml(path)
    assert info.value.file == str(path) and info.value.line is not None


def test_transaction_lands_every_file(tmp_path):
    txn = Transaction(tmp_path, tmp_path / ".novel" / "txn")
    txn.stage(tmp_path / "scenes" / "s.md", "scene")
    txn.stage(tmp_path / "state.yaml", "tick: 1\n")
    txn.commit()
    assert (tmp_path / "scenes" / "s.md").read_text() == "scene"
    assert (tmp_path / "state.yaml").read_text() == "tick: 1\n"
    assert not list((tmp_path / ".novel" / "txn").iterdir())


def test_recover_rolls_a_journaled_commit_forward(tmp_path):
    work = tmp_path / ".novel" / "txn"
    work.mkdir(parents=True)
    (work / "0000.staged").write_text("new scene")
    (work / "journal.json").write_text(json.dumps([
        {"staged": "0000.staged", "target": "scenes/scene_001.md"},
        {"staged": "0001.staged", "target": "state.yaml"}]))  # 0001 already moved
    (tmp_path / "state.yaml").write_text("tick: 1\n")
    assert recover(tmp_path, work) is True
    assert (tmp_path / "scenes" / "scene_001.md").read_text() == "new scene"
    assert not (work / "journal.json").exists()


def test_recover_drops_a_commit_that_never_reached_its_journal(tmp_path):
    work = tmp_path / ".novel" / "txn"
    work.mkdir(parents=True)
    (work / "0000.staged").write_text("half")
    assert recover(tmp_path, work) is False
    assert not list(work.iterdir())
    assert not (tmp_path / "scenes").exists()


def test_a_transaction_appends_and_removes(tmp_path):
    (tmp_path / "facts.yaml").write_text("facts:\n- text: a\n")
    (tmp_path / "old.yaml").write_text("gone soon\n")
    txn = Transaction(tmp_path, tmp_path / ".novel" / "txn")
    txn.append(tmp_path / "facts.yaml", "- text: b\n")
    txn.append(tmp_path / "facts.yaml", "- text: c\n")
    txn.append(tmp_path / "new.yaml", "made\n")
    txn.remove(tmp_path / "old.yaml")
    txn.commit()
    assert (tmp_path / "facts.yaml").read_text() == "facts:\n- text: a\n- text: b\n- text: c\n"
    assert (tmp_path / "new.yaml").read_text() == "made\n"
    assert not (tmp_path / "old.yaml").exists()
    assert not list((tmp_path / ".novel" / "txn").iterdir())


def test_a_later_operation_on_the_same_path_wins(tmp_path):
    txn = Transaction(tmp_path, tmp_path / "txn")
    txn.stage(tmp_path / "a", "whole\n")
    txn.append(tmp_path / "a", "more\n")       # added to the staged text
    txn.remove(tmp_path / "b")
    txn.stage(tmp_path / "b", "back\n")
    txn.commit()
    assert (tmp_path / "a").read_text() == "whole\nmore\n"
    assert (tmp_path / "b").read_text() == "back\n"


def test_a_cut_keeps_the_first_bytes_and_writes_after_them(tmp_path):
    (tmp_path / "log.json").write_text('{\n "a": 1,\n "messages": []\n}\n')
    txn = Transaction(tmp_path, tmp_path / "txn")
    txn.cut(tmp_path / "log.json", Cut(len('{\n "a": 1'), "\n}\n"))
    txn.commit()
    assert (tmp_path / "log.json").read_text() == '{\n "a": 1\n}\n'


@pytest.mark.parametrize("point", ["before_journal", "mid_commit"])
def test_a_cut_by_a_crash_lands_once(tmp_path, point):
    from novel_agent import crashpoints
    log = tmp_path / "log.json"
    log.write_text('{\n "a": 1,\n "messages": []\n}\n')
    txn = Transaction(tmp_path, tmp_path / "txn")
    txn.stage(tmp_path / "scene.md", "scene\n")          # the op the crash point follows
    txn.cut(log, Cut(len('{\n "a": 1'), "\n}\n"))
    crashpoints.arm(point, lambda: (_ for _ in ()).throw(Killed()))
    try:
        with pytest.raises(Killed):
            txn.commit()
    finally:
        crashpoints.disarm()
    assert recover(tmp_path, tmp_path / "txn") is (point == "mid_commit")
    assert recover(tmp_path, tmp_path / "txn") is False
    assert log.read_text() == ('{\n "a": 1\n}\n' if point == "mid_commit"
                               else '{\n "a": 1,\n "messages": []\n}\n')


class Killed(Exception):
    """Stands for SIGKILL: the journal stays, nothing after the crash point runs."""


@pytest.mark.parametrize("point", ["before_journal", "mid_commit"])
def test_an_append_cut_by_a_crash_lands_once(tmp_path, point):
    from novel_agent import crashpoints
    facts = tmp_path / "facts.yaml"
    facts.write_text("facts:\n- text: a\n")
    txn = Transaction(tmp_path, tmp_path / "txn")
    txn.stage(tmp_path / "scene.md", "scene\n")          # the op the crash point follows
    txn.append(facts, "- text: b\n")
    crashpoints.arm(point, lambda: (_ for _ in ()).throw(Killed()))
    try:
        with pytest.raises(Killed):
            txn.commit()
    finally:
        crashpoints.disarm()
    assert recover(tmp_path, tmp_path / "txn") is (point == "mid_commit")
    assert recover(tmp_path, tmp_path / "txn") is False
    assert facts.read_text() == ("facts:\n- text: a\n- text: b\n" if point == "mid_commit"
                                 else "facts:\n- text: a\n")


def test_recovery_applies_an_append_again_without_doubling_it(tmp_path):
    """Killed after the append reached the file, before its staging file was removed."""
    work = tmp_path / "txn"
    work.mkdir()
    (tmp_path / "facts.yaml").write_text("facts:\n- text: a\n- text: b\n")   # appended
    (work / "0000.staged").write_text("- text: b\n")
    (work / "journal.json").write_text(json.dumps([
        {"staged": "0000.staged", "target": "facts.yaml", "append_at": 17},
        {"target": "loops.yaml", "remove": True}]))
    (tmp_path / "loops.yaml").write_text("loops: []\n")
    assert recover(tmp_path, work) is True
    assert (tmp_path / "facts.yaml").read_text() == "facts:\n- text: a\n- text: b\n"
    assert not (tmp_path / "loops.yaml").exists() and not list(work.iterdir())


def test_a_cut_in_the_journal_applied_again_leaves_the_file_as_once(tmp_path):
    """A cut's few bytes live in the journal (nothing staged): killed after it reached
    the file, recovery applies it again with the same result; a file gone is left gone."""
    work = tmp_path / "txn"
    work.mkdir()
    (tmp_path / "log.json").write_text('{\n "a": 1\n}\n')                  # cut already
    (work / "journal.json").write_text(json.dumps([
        {"target": "log.json", "cut_at": 9, "text": "\n}\n"},
        {"target": "gone.json", "cut_at": 9, "text": "\n}\n"}]))
    assert recover(tmp_path, work) is True
    assert (tmp_path / "log.json").read_text() == '{\n "a": 1\n}\n'
    assert not (tmp_path / "gone.json").exists() and not list(work.iterdir())


def test_a_journal_that_is_not_a_list_of_operations_is_named(tmp_path):
    work = tmp_path / "txn"
    work.mkdir()
    (work / "journal.json").write_text('{"staged": "0000.staged"}')
    with pytest.raises(FileFormatError, match="an unreadable commit journal"):
        recover(tmp_path, work)


@pytest.mark.parametrize("umask", [0o022, 0o027, 0o077], ids=oct)
def test_written_files_follow_the_umask_of_the_moment(tmp_path, umask):
    import os
    import stat
    old = os.umask(umask)
    try:
        atomic_write(tmp_path / "atomic", "x")
        txn = Transaction(tmp_path, tmp_path / "txn")
        txn.stage(tmp_path / "staged", "x")
        txn.append(tmp_path / "created", "x")
        txn.commit()
    finally:
        os.umask(old)
    for name in ("atomic", "staged", "created"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o666 & ~umask, name
