"""A session's history entries by what changed (history/seen.py, novel_agent/inotify.py):
the kernel's word on which files moved, a stat of those only, git told them by name;
the entries the same as a whole look at the project would make."""

from __future__ import annotations

import os
import sys
import time

import pytest

from novel_agent.history import hooks
from novel_agent.history.seen import SeenFiles
from novel_agent.history.store import History
from novel_agent.inotify import Watch
from novel_agent.models.offline import OfflineModel
from novel_agent.tick.pipeline import begin, tick
from novel_agent.tick.session import Session

needs_inotify = pytest.mark.skipif(sys.platform != "linux", reason="inotify is Linux's")


def session_of(project):
    return Session.open(project, project.config(), make_model=lambda: OfflineModel())


def pending_tree_is_head(project) -> bool:
    """What a whole look (git add -A) makes of the files is the last entry's tree."""
    history = History(project)
    return history.stage() == history.git.text("rev-parse", "HEAD^{tree}")


@needs_inotify
def test_the_kernel_names_what_changed_and_nothing_else(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "one.md").write_text("one")
    (tmp_path / ".novel").mkdir()
    watch = Watch.start(tmp_path, {".novel"})
    assert watch is not None
    try:
        assert watch.changed() == set()
        (tmp_path / "a" / "one.md").write_text("uno")
        (tmp_path / ".novel" / "index.db").write_text("not the story's")
        (tmp_path / "b" / "c").mkdir(parents=True)         # a folder made, with a file
        (tmp_path / "b" / "c" / "two.md").write_text("two")
        assert watch.changed() >= {"a/one.md", "b/c/two.md"}
        (tmp_path / "b" / "c" / "two.md").write_text("dos")   # watched since it was made
        assert watch.changed() == {"b/c/two.md"}
        os.remove(tmp_path / "b" / "c" / "two.md")
        os.rmdir(tmp_path / "b" / "c")
        assert watch.changed() >= {"b/c/two.md", "b/c/"}
        assert watch.changed() == set()
        os.rename(tmp_path / "a", tmp_path / "z")    # a folder moved: look at everything
        assert watch.changed() is None
        (tmp_path / "z" / "one.md").write_text("one again")  # and it is named where it is
        assert watch.changed() == {"z/one.md"}
    finally:
        watch.close()


@needs_inotify
def test_the_kernel_cannot_name_a_root_moved_away(tmp_path):
    root = tmp_path / "book"
    root.mkdir()
    watch = Watch.start(root)
    assert watch is not None
    root.rename(tmp_path / "elsewhere")
    assert watch.changed() is None          # "look at everything"
    watch.close()


@pytest.mark.parametrize("watch", [True, False])
def test_a_look_finds_each_kind_of_change_since_the_kept_one(tmp_path, watch):
    (tmp_path / "scenes").mkdir()
    (tmp_path / ".novel").mkdir()
    (tmp_path / "scenes" / "scene_001.md").write_text("The tide came in.")
    (tmp_path / "gone.md").write_text("x")
    (tmp_path / ".novel" / "state.yaml").write_text("tick: 1\n")
    seen = SeenFiles(tmp_path, time.time_ns, watch=watch)
    assert seen.changed(seen.look()) is None      # nothing kept yet: look at everything
    seen.keep(seen.look())
    assert seen.changed(seen.look()) == []
    (tmp_path / "scenes" / "scene_001.md").write_text("The tide went out.")
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "new.md").write_text("new")
    (tmp_path / "gone.md").unlink()
    (tmp_path / ".novel" / "state.yaml").write_text("tick: 2\n")
    (tmp_path / ".novel" / "index.db").write_text("not the story's")
    assert seen.changed(seen.look()) == [".novel/state.yaml", "gone.md", "notes/new.md",
                                         "scenes/scene_001.md"]
    seen.close()


def test_a_change_the_stamp_cannot_show_is_found_by_the_bytes(tmp_path):
    scene = tmp_path / "scene_001.md"
    scene.write_text("The tide came in.")
    seen = SeenFiles(tmp_path, time.time_ns, watch=False)
    seen.keep(seen.look())
    st = os.stat(scene)
    with open(scene, "r+") as handle:          # in place, the same size, the same mtime
        handle.write("The tide went in")
    os.utime(scene, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert os.stat(scene).st_mtime_ns == st.st_mtime_ns and os.stat(scene).st_ino == st.st_ino
    assert seen.changed(seen.look()) == ["scene_001.md"]


def test_a_sessions_entries_are_a_whole_looks_and_name_only_their_files(project):
    """Tick after tick in one session: the history's tree is what `git add -A` makes of
    the files, an edit by hand made while a tick ran gets an entry of its own at the
    next tick (not the tick's), and the kernel, not a stat of every file, says what
    changed."""
    with project.locked(), session_of(project) as session:
        tick(session)
        assert pending_tree_is_head(project)
        tick(session)
        assert pending_tree_is_head(project)
        assert History(project).entries()[0].kind == "tick"
        scene, notes = project.scene_path(1), project.root / "notes.md"

        def edit_while_ticking(event):
            if event.stage == "writer":
                scene.write_text(scene.read_text() + "\nA line of the author's.\n")
                notes.write_text("The keeper's name is Mara.\n")

        tick(session, on_stage=edit_while_ticking)
        entry = History(project).entries()[0]
        assert entry.kind == "tick" and entry.tick == 3
        assert "scenes/scene_001.md" not in entry.changed and "notes.md" not in entry.changed
        ticked = tick(session)
        edited = "edited by hand: notes.md, scenes/scene_001.md"
        assert f"history: {edited}" in ticked.notices
        assert [e.subject for e in History(project).entries()][1] == edited
        assert pending_tree_is_head(project)
        if sys.platform == "linux":
            assert session.seen.whole_looks == 1


def test_memory_edited_by_hand_between_ticks_is_what_the_next_tick_reads(project):
    """begin() takes memory's stamps from the history's look (no stat of its own)."""
    with project.locked(), session_of(project) as session:
        tick(session)
        tick(session)
        mara = next((project.memory_dir / "characters").glob("*.yaml"))
        text = mara.read_text()
        lines = ["description: Keeps the light, by hand." if line.startswith("description:")
                 else line for line in text.splitlines()]
        mara.write_text("\n".join(lines) + "\n")
        hooks.before_tick(project, session.now, seen=session.seen)
        draft = begin(session)
        assert session.seen.fresh is False          # begin took the look's stamps
        assert draft.memory.characters[mara.stem]["description"] == "Keeps the light, by hand."


def test_a_change_the_kernel_did_not_report_is_found_by_a_whole_look(tmp_path):
    """A network file system edited from another machine: the kernel says nothing, and
    the whole look every summary makes finds it."""
    (tmp_path / "scene_001.md").write_text("The tide came in.")
    seen = SeenFiles(tmp_path, time.time_ns)
    seen.keep(seen.look())
    if seen.watch is not None:
        seen.watch.changed = lambda: set()       # blind, as for another machine's edits
    (tmp_path / "scene_001.md").write_text("The tide came in, twice.")
    assert seen.changed(seen.look()) == ([] if seen.watch is not None else ["scene_001.md"])
    assert seen.changed(seen.look(whole=True)) == ["scene_001.md"]
    seen.close()


@needs_inotify
def test_a_process_holds_a_bounded_number_of_watches(tmp_path, monkeypatch):
    import novel_agent.inotify as inotify
    monkeypatch.setattr(inotify, "MAX_OPEN", inotify._open + 1)
    first = Watch.start(tmp_path)
    assert first is not None and Watch.start(tmp_path) is None    # the rest look whole
    first.close()
    again = Watch.start(tmp_path)
    assert again is not None
    again.close()


def test_a_queue_the_kernel_overflowed_means_look_at_everything(tmp_path):
    """IN_Q_OVERFLOW (events lost): changed() says None, then counts again."""
    import novel_agent.inotify as inotify
    read, write = os.pipe()
    os.set_blocking(read, False)
    watch = Watch(inotify._libc(), read, tmp_path, frozenset())
    watch.folders[1] = "scenes/"
    name = b"scene_001.md".ljust(16, b"\0")
    os.write(write, inotify.EVENT.pack(1, inotify.IN_CLOSE_WRITE, 0, len(name)) + name)
    assert watch.changed() == {"scenes/scene_001.md"}
    os.write(write, inotify.EVENT.pack(-1, inotify.IN_Q_OVERFLOW, 0, 0))
    assert watch.changed() is None
    assert watch.changed() == set()
    os.close(write)
    inotify._open += 1          # close() gives back what start() took
    watch.close()


@pytest.mark.parametrize("watch", [True, False])
def test_the_files_moved_since_a_look_are_those_named_or_found_changed(tmp_path, watch):
    (tmp_path / "scenes").mkdir()
    (tmp_path / "scenes" / "scene_001.md").write_text("The tide came in.")
    (tmp_path / "notes.md").write_text("x")
    seen = SeenFiles(tmp_path, time.time_ns, watch=watch)
    assert seen.moved_since(None) is None
    seen.look()
    first = seen.looks
    assert seen.moved_since(first - 1) is None        # the first look: nothing to compare
    assert seen.moved_since(first) == set()
    (tmp_path / "scenes" / "scene_001.md").write_text("The tide went out.")
    seen.look()
    (tmp_path / "notes.md").unlink()
    (tmp_path / "scenes" / "scene_002.md").write_text("Dawn.")
    seen.look(whole=True)                             # a summary's look, compared too
    assert seen.moved_since(first) == {"scenes/scene_001.md", "notes.md",
                                       "scenes/scene_002.md"}
    assert seen.moved_since(first + 1) == {"notes.md", "scenes/scene_002.md"}
    for _ in range(10):
        seen.look()
    assert seen.moved_since(first) is None            # older than the looks kept
    seen.close()


def test_a_tick_reads_and_indexes_only_what_moved_and_misses_no_edit(project):
    """After the first tick of a session, begin() is told by the history's look which
    files moved: memory is read in part (no whole read again) and the index syncs those
    files only; a character and a scene edited by hand are what the next tick reads."""
    with project.locked(), session_of(project) as session:
        tick(session)
        tick(session)
        scene = project.scene_path(1)
        scene.write_text(scene.read_text() + "\nA heron stood in the shallows.\n")
        mara = next((project.memory_dir / "characters").glob("*.yaml"))
        lines = ["description: Keeps the light, by hand." if line.startswith("description:")
                 else line for line in mara.read_text().splitlines()]
        mara.write_text("\n".join(lines) + "\n")
        calls = []
        real_sync = session.sync_index

        def sync_index(*args, **kwargs):
            calls.append(kwargs.get("moved"))
            return real_sync(*args, **kwargs)

        session.sync_index = sync_index
        hooks.before_tick(project, session.now, seen=session.seen)
        draft = begin(session)
        assert draft.memory.characters[mara.stem]["description"] == "Keeps the light, by hand."
        assert session.memory.whole_reads == 1
        assert calls and f"scenes/{scene.name}" in calls[0]
        hits = session.index.db.execute(
            "SELECT COUNT(*) FROM search WHERE search MATCH 'heron'").fetchone()[0]
        assert hits == 1
