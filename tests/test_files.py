"""The one writer: atomic writes, front matter, transactions and their recovery."""

from __future__ import annotations

import json

import pytest

from novel_agent.errors import FileFormatError
from novel_agent.files import (Transaction, atomic_write, parse_front_matter, read_yaml,
                               recover, render_front_matter)


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
