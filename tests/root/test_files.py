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


# -- the alias bomb and links out of the project (issue 50, items 1 and 2) ---------------

def alias_bomb() -> str:
    """Nine nested anchors: 9**9 (387 million) 'lol's once expanded."""
    lines = ["name: Mara", 'a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 10)]
    return "\n".join(lines) + "\n"


def test_the_alias_bomb_is_refused_naming_the_file_not_expanded(tmp_path):
    """On main read_yaml returned the bomb's shared structure and the first copy of it
    (memory/store.plain_copy) ran until killed; now it is a FileFormatError at once."""
    path = tmp_path / "mara.yaml"
    path.write_text(alias_bomb())
    with pytest.raises(FileFormatError) as info:
        read_yaml(path)
    assert info.value.file == str(path) and "alias bomb" in str(info.value)
    assert len(str(info.value).splitlines()) == 1


def test_a_recursive_alias_is_refused_and_a_few_aliases_load(tmp_path):
    path = tmp_path / "x.yaml"
    path.write_text("a: &a [1, *a]\n")
    with pytest.raises(FileFormatError, match="recursive alias"):
        read_yaml(path)
    path.write_text("base: &b {eyes: grey}\nmara: *b\nnell: {<<: *b, hair: red}\nnote: a*b\n")
    assert read_yaml(path) == {"base": {"eyes": "grey"}, "mara": {"eyes": "grey"},
                               "nell": {"eyes": "grey", "hair": "red"}, "note": "a*b"}


def test_every_yaml_load_in_the_package_is_bounded():
    """No module parses YAML but through files.load_yaml / compose_yaml (or the bounded
    loaders): a grep of the package."""
    import re
    from pathlib import Path

    import novel_agent
    pattern = re.compile(r"yaml\.(safe_load|load|full_load|unsafe_load|compose|load_all)\(|"
                         r"\bYAML\(\)\.load|yml\.load\(")
    root = Path(novel_agent.__file__).parent
    found = [f"{p.relative_to(root)}:{n}" for p in root.rglob("*.py") if p.name != "files.py"
             for n, line in enumerate(p.read_text().splitlines(), 1) if pattern.search(line)]
    assert found == ["yaml_merge.py:59"], found   # ruamel, given only text compose_yaml passed


def a_project(tmp_path):
    root = tmp_path / "book"
    (root / "scenes").mkdir(parents=True)
    (root / "project.yaml").write_text("name: book\n")
    secret = tmp_path / "secret.txt"
    secret.write_text("root:x:0:0:SECRET\n")
    return root, secret


def test_a_file_linked_out_of_its_project_is_refused_and_one_inside_is_read(tmp_path):
    from novel_agent.errors import OutsideLinkError
    from novel_agent.files import read_text

    root, secret = a_project(tmp_path)
    (root / "scenes" / "scene_001.md").symlink_to(secret)
    (root / "scenes" / "scene_002.md").write_text("Mine.\n")
    (root / "scenes" / "scene_003.md").symlink_to("scene_002.md")
    with pytest.raises(OutsideLinkError) as info:
        read_text(root / "scenes" / "scene_001.md")
    assert info.value.file == str(root / "scenes" / "scene_001.md")
    assert "SECRET" not in str(info.value) and len(str(info.value).splitlines()) == 1
    assert read_text(root / "scenes" / "scene_003.md") == "Mine.\n"
    (root / "lore").symlink_to(tmp_path)             # a folder linked in from outside
    with pytest.raises(OutsideLinkError):
        read_text(root / "lore" / "secret.txt")
    with pytest.raises(OutsideLinkError):            # .. through a link inside
        read_text(root / "scenes" / ".." / "lore" / "secret.txt")
    outside = tmp_path / "mine.md"                    # in no project: a link is followed
    outside.symlink_to(secret)
    assert "SECRET" in read_text(outside)


def test_a_folder_linked_in_that_holds_a_project_of_its_own_is_still_outside(tmp_path):
    """The project is the outermost folder with project.yaml: a linked folder cannot pass
    for it by holding one."""
    from novel_agent.errors import OutsideLinkError
    from novel_agent.files import read_text

    root, secret = a_project(tmp_path)
    (tmp_path / "project.yaml").unlink(missing_ok=True)
    other = tmp_path / "other"
    (other / "characters").mkdir(parents=True)
    (other / "characters" / "project.yaml").write_text("name: other\n")
    (other / "characters" / "mara.yaml").write_text("name: SECRET\n")
    (root / "memory").symlink_to(other)
    with pytest.raises(OutsideLinkError):
        read_text(root / "memory" / "characters" / "mara.yaml")


def test_inside_is_what_the_web_server_hands_out_of_export(tmp_path):
    from novel_agent.files import inside

    root, secret = a_project(tmp_path)
    export = root / "export"
    export.mkdir()
    (export / "book.html").write_text("<h1>book</h1>")
    (export / "passwd.html").symlink_to(secret)
    assert inside(export, "book.html") == export / "book.html"
    assert inside(export, "passwd.html") is None and inside(export, "../project.yaml") is None
