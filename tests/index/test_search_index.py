"""The search index in .novel/index.db: kept in step with the files, healed when missing,
garbage or behind a hand edit; `novel search` and `novel reindex`."""

from __future__ import annotations

import json
import random
import sqlite3
from contextlib import closing

import pytest

from novel_agent.index.db import Index
from novel_agent.index.search import match_query, search
from novel_agent.index.sync import open_index, sync
from novel_agent.models.offline import OfflineModel
from novel_agent.story.memory.read import load_memory
from novel_agent.story.scenes import load_scene
from tests.support.ticking import run_ticks


def kinds(project) -> dict[str, int]:
    index = Index(project.index_db)
    try:
        return dict(index.db.execute("SELECT kind, COUNT(*) FROM docs GROUP BY kind"))
    finally:
        index.close()


def test_a_tick_indexes_what_it_wrote_and_the_next_command_has_nothing_to_redo(project):
    results = run_ticks(project, 3)
    counts = kinds(project)
    facts = load_memory(project.memory_dir).facts
    assert counts["scene"] == 3 and counts["fact"] == len(facts) > 0
    index, line = open_index(project)
    try:
        assert line == ""
        assert sync(project, index).changed is False
        title = results[-1].title
        hits = search(index, title, "scene")
        assert hits[0].key == "scene:3"
    finally:
        index.close()


def test_the_ticks_own_sync_looks_only_at_what_it_wrote_summaries_included(project):
    results = run_ticks(project, 12)    # a checkpoint and the overall summary on the way
    assert (project.summaries_dir / "checkpoint_010.md").is_file()
    assert [n for r in results for n in r.notices if "index.db" in n] == []
    index, line = open_index(project)
    try:
        assert line == "" and sync(project, index).changed is False
        scene = project.scene_path(2)
        scene.write_text(scene.read_text() + "\nA cormorant with a silver ring.\n")
        gone = project.scene_path(12)
        kept = gone.read_text()
        gone.unlink()
        report = sync(project, index, paths=[gone, project.plan_path(12)])
        assert report.removed == ["scenes/scene_012.md"] and report.read == []
        gone.write_text(kept)
        report = sync(project, index)    # what no tick wrote: the next full look sees it
        assert report.read == ["scenes/scene_002.md", "scenes/scene_012.md"]
    finally:
        index.close()


def test_the_index_is_wal_and_its_migrations_are_named(project):
    run_ticks(project, 1)
    index = Index(project.index_db)
    try:
        assert index.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        names = [r[0] for r in index.db.execute("SELECT name FROM _migrations ORDER BY rowid")]
        assert names == ["001_token_counts", "002_usage", "003_usage_ledger", "004_search",
                         "005_usage_cache_writes", "006_prose_numbers"]
    finally:
        index.close()


def test_a_scene_edited_by_hand_is_read_again_with_a_note_and_the_next_tick_is_right(project,
                                                                                     cli):
    run_ticks(project, 3)
    scene = project.scene_path(2)
    scene.write_text(scene.read_text() + "\nA cormorant with a silver ring on its leg.\n")
    out = cli("tick", "-p", str(project.root)).output
    assert "note: index.db: re-read 1 changed file (scenes/scene_002.md)" in out
    assert "tick 4 of harbour" in out
    index, line = open_index(project)
    try:
        assert line == ""
        assert [h.key for h in search(index, "cormorant", "scene")] == ["scene:2"]
    finally:
        index.close()


def test_a_new_projects_first_tick_says_nothing_of_the_index(project, cli):
    assert not project.index_db.exists()
    out = cli("tick", "-p", str(project.root)).output
    assert "index.db" not in out and "tick 1 of harbour" in out
    assert kinds(project)["scene"] == 1


def test_a_deleted_index_is_built_again_with_its_usage_rows(project, cli):
    run_ticks(project, 2)
    rows = len((project.novel_dir / "usage.jsonl").read_text().splitlines())
    for path in project.novel_dir.glob("index.db*"):
        path.unlink()
    out = cli("tick", "-p", str(project.root)).output
    assert "index.db was missing: built again from the files (2 scenes" in out
    assert f"; {rows} usage rows restored from usage.jsonl" in out
    assert kinds(project)["scene"] == 3


def test_a_garbage_index_is_rebuilt_and_the_tick_goes_on(project, cli):
    run_ticks(project, 2)
    for path in project.novel_dir.glob("index.db*"):
        path.unlink()
    project.index_db.write_bytes(b"this is not a database" * 100)
    out = cli("tick", "-p", str(project.root)).output
    assert "index.db was unreadable" in out and "searched files read again: 2 scenes" in out
    assert "tick 3 of harbour" in out
    assert kinds(project)["scene"] == 3


def test_a_removed_lore_file_and_a_deleted_character_leave_the_index(project):
    run_ticks(project, 2)
    (project.lore_dir / "bell.yaml").write_text("keys: [bell]\ncontent: The bell.\n")
    index, _ = open_index(project)
    index.close()
    assert kinds(project)["lore"] == 1
    (project.lore_dir / "bell.yaml").unlink()
    character = sorted((project.memory_dir / "characters").glob("*.yaml"))[0]
    character.unlink()
    index, line = open_index(project)
    try:
        assert line.startswith("index.db: dropped 2 removed files (")
        assert "lore" not in dict(index.db.execute("SELECT kind, 1 FROM docs GROUP BY kind"))
        key = f"character:{character.stem}"
        assert index.db.execute("SELECT COUNT(*) FROM docs WHERE key = ?", (key,)).fetchone() == (0,)
    finally:
        index.close()


def test_a_broken_scene_is_left_out_of_the_index_without_stopping_it(project):
    run_ticks(project, 2)
    project.scene_path(1).write_text("---\ntitle: [unclosed\n---\nText.\n")
    index, line = open_index(project)
    try:
        assert line == ("index.db: left out 1 scene that cannot be read (`novel doctor` says "
                        "why) (scenes/scene_001.md)")
        assert [h.key for h in search(index, "text", "scene")] != ["scene:1"]
        assert index.db.execute("SELECT COUNT(*) FROM docs WHERE kind='scene'").fetchone() == (1,)
        again = sync(project, index)       # not kept as read: every sync reads it again
        assert list(again.unread) == ["scenes/scene_001.md"] and not again.read
        assert "title: [unclosed" not in again.unread["scenes/scene_001.md"]
    finally:
        index.close()


def test_only_what_changed_is_written(project):
    run_ticks(project, 5)
    index, _ = open_index(project)
    try:
        facts = project.memory_dir / "facts.yaml"
        facts.write_text(facts.read_text() + "- text: The well is dry.\n  scene: 2\n")
        report = sync(project, index)
        assert report.read == ["memory/facts.yaml"] and report.written == 1
    finally:
        index.close()



def test_a_loop_or_relationship_edited_by_hand_is_read_again_alone(project):
    run_ticks(project, 12)
    memory = load_memory(project.memory_dir)
    loop, rel = memory.loops[0], memory.relationships[0]
    index, _ = open_index(project)
    try:
        sources = dict(index.db.execute("SELECT key, source FROM docs WHERE kind IN "
                                        "('loop', 'relationship')"))
        assert sources[f"loop:{loop['id']}"] == f"memory/loops/{loop['id']}.yaml"
        assert sources[f"relationship:{rel['a']}|{rel['b']}"] == \
            f"memory/relationships/{rel['id']}.yaml"
        path = project.memory_dir / "loops" / f"{loop['id']}.yaml"
        path.write_text(path.read_text().replace(loop["description"], "who rang the bell"))
        report = sync(project, index)
        assert report.read == [f"memory/loops/{loop['id']}.yaml"] and report.written == 1
        assert [h.key for h in search(index, "rang bell", "loop")][:1] == [f"loop:{loop['id']}"]
    finally:
        index.close()


def test_the_ticks_sync_takes_memorys_folders_as_reading_memory_saw_them(project):
    """Before a tick, memory's item files are looked at once: the sync takes their mtime
    and size from the read (scan(listed) is scan()), and a file edited in place by hand
    (its folder's mtime unmoved) is still read again."""
    import os

    from novel_agent.index.seen import scan
    from novel_agent.story.memory.read import read_memory
    run_ticks(project, 3)
    listed: dict = {}
    read_memory(project.memory_dir, listed)
    assert str(project.memory_dir / "characters") in listed
    assert scan(project, listed) == scan(project)
    index, _ = open_index(project)
    try:
        path = next((project.memory_dir / "characters").glob("*.yaml"))
        folder = os.stat(path.parent).st_mtime_ns
        with open(path, "a", encoding="utf-8") as f:      # in place, as an editor may
            f.write("pinned: true\n")
        assert os.stat(path.parent).st_mtime_ns == folder
        listed = {}
        read_memory(project.memory_dir, listed)
        report = sync(project, index, listed=listed)
        assert report.read == [f"memory/characters/{path.name}"]
    finally:
        index.close()


def test_a_sync_that_knows_what_the_last_one_looked_at_asks_only_about_what_moved(project):
    """A session's syncs keep what they looked at (`last`): the next one asks the files
    table only about files whose stat moved, came or went, and sees edits by hand in
    place; a table that holds another number of files than `last` is looked at whole."""
    from novel_agent.index import seen
    run_ticks(project, 3)
    index, _ = open_index(project)
    asked: list[list[str]] = []
    real = seen.known
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(seen, "known",
                          lambda db, paths: asked.append(list(paths)) or real(db, paths))
            last: dict = {}
            assert sync(project, index, last=last).changed is False   # fills `last`
            assert "scenes" in last and asked == []
            assert sync(project, index, last=last).changed is False and asked == [[]]
            scene, gone = project.scene_path(2), project.scene_path(3)
            with scene.open("a") as handle:                   # in place, by hand
                handle.write("\nA cormorant with a silver ring.\n")
            text = gone.read_text()
            gone.unlink()
            report = sync(project, index, last=last)
            assert report.read == ["scenes/scene_002.md"]
            assert report.removed == ["scenes/scene_003.md"]
            assert asked[-1] == ["scenes/scene_002.md", "scenes/scene_003.md"]
            gone.write_text(text)
            report = sync(project, index, paths=[gone], last=last)   # a tick's own files
            assert report.read == ["scenes/scene_003.md"]
            assert sync(project, index, last=last).changed is False and asked[-1] == []
            index.db.execute("DELETE FROM files WHERE path = 'scenes/scene_001.md'")
            report = sync(project, index, last=last)          # rebuilt elsewhere, say
            assert report.read == ["scenes/scene_001.md"]
    finally:
        index.close()


def test_a_ticks_sync_of_facts_it_added_to_leaves_the_index_as_a_rebuild_would(project):
    """After its commit a tick makes the docs of the facts it added, not of all of
    facts.yaml again (story/memory/kept.py keeps memory between ticks), and the index
    holds what `novel reindex` would build, a fact told twice included."""
    from novel_agent.index.sync import rebuild
    from novel_agent.story.memory.store import add_fact
    from novel_agent.tick import scene_memory
    from novel_agent.tick.pipeline import tick
    from novel_agent.tick.session import Session

    real, made = scene_memory.apply_extraction, []

    def apply(memory, extraction, **kwargs):
        changes = real(memory, extraction, **kwargs)
        add_fact(memory, f"The tide turned at {len(memory.facts)}.", tick=kwargs["tick"])
        if memory.facts:                                   # a second fact of the same key
            memory.facts.append(dict(memory.facts[0]))
        return changes

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(scene_memory, "apply_extraction", apply)
        from novel_agent.index import sync as sync_module
        docs_of = sync_module.fact_docs
        patch.setattr(sync_module, "fact_docs",
                      lambda facts, source: made.append(len(list(facts))) or
                      docs_of(facts, source))
        with Session.open(project, project.config(), make_model=lambda: OfflineModel(
                seed=0)) as session:
            for _ in range(4):
                tick(session)
    facts = len(load_memory(project.memory_dir).facts)
    assert facts >= 8 and max(made[1:]) < facts / 2      # the added ones, not all of them

    def docs():
        index = Index(project.index_db)
        try:
            return sorted(index.db.execute("SELECT key, kind, source, sha FROM docs"))
        finally:
            index.close()
    held = docs()
    rebuild(project)
    assert held == docs()


# ---------------------------------------------------------------- queries and the CLI


def test_match_query_quotes_words_and_keeps_phrases():
    assert match_query('the "brass locket" and Mara\'s map') == \
        '"brass locket" OR "mara\'s" OR "map"'
    assert match_query('AND OR ( "') == ""                 # only stopwords and syntax
    assert match_query('NEAR(lamp* "x') == '"near" OR "lamp"'


def test_novel_search_finds_a_fact_and_says_where_it_points(project, cli):
    run_ticks(project, 4)
    facts = project.memory_dir / "facts.yaml"
    facts.write_text(facts.read_text() + "- text: The cormorant wears a silver ring.\n"
                                         "  scene: 3\n")
    p = str(project.root)
    result = cli("search", "cormorant ring", "-p", p)
    assert result.stderr == "note: index.db: re-read 1 changed file (memory/facts.yaml)\n"
    lines = result.stdout.splitlines()
    assert lines[0].split()[1:] == ["fact", "fact", "from", "scene", "3", "(scene", "3)"]
    assert "[cormorant] wears a silver [ring]" in lines[1]
    data = json.loads(cli("search", "cormorant", "-p", p, "--json").output)
    assert [(d["kind"], d["tick"], d["points_to"]) for d in data] == [("fact", 3, "scene 3")]
    assert data[0]["score"] > 0
    assert cli("search", "zebra", "-p", p).output == "nothing found for 'zebra'\n"
    assert json.loads(cli("search", "ring", "-p", p, "--kind", "lore", "--json").output) == []


def test_novel_reindex_rebuilds_everything_from_the_files(project, cli):
    run_ticks(project, 3)
    rows = len((project.novel_dir / "usage.jsonl").read_text().splitlines())
    before = kinds(project)
    out = cli("reindex", "-p", str(project.root)).output
    assert out.startswith("rebuilt harbour/.novel/index.db in ")
    assert f"{before['scene']} scenes" in out and f"; {rows} usage rows from usage.jsonl" in out
    assert kinds(project) == before


def test_bm25_and_newest_keep_the_same_rows_whatever_they_parse(project):
    """bm25 and newest filter what the match gave by kind and tick before reading each
    document's JSON, and stop at their limit: the rows are those of every match parsed
    and filtered after, in the same order; without snippets, only the snippets differ."""
    from novel_agent.index.search import any_of, bm25, newest, rows_by_id
    run_ticks(project, 6)
    index, _ = open_index(project)
    try:
        names = sorted({str(c["name"]) for c in load_memory(project.memory_dir)
                        .characters.values()})
        query = any_of(names)
        every = [r[0] for r in index.db.execute(
            "SELECT rowid FROM search WHERE search MATCH ? ORDER BY rowid DESC", (query,))]
        parsed = {r.id: r for r in rows_by_id(index, every)}
        for kinds, limit, before in ((("scene", "fact"), 5, 4), (("character",), 3, None),
                                     (("scene", "fact", "loop"), 100, 6)):
            kept = [parsed[i] for i in every[:limit * 3] if parsed[i].kind in kinds
                    and (before is None or parsed[i].tick is None or parsed[i].tick < before)]
            assert newest(index, query, kinds, limit, before) == kept[:limit]
            ranked = bm25(index, query, kinds, limit, before)
            plain = bm25(index, query, kinds, limit, before, snippets=False)
            assert ranked and [r.__dict__ | {"snippet": ""} for r in ranked] == [
                r.__dict__ for r in plain]
            assert all(r.kind in kinds for r in ranked) and len(ranked) <= limit
    finally:
        index.close()


def test_a_document_changed_by_hand_is_read_as_it_is_now_not_as_it_was_parsed(project):
    """Documents are kept parsed by id, key and sha: a scene rewritten by hand, synced
    again, is read with its new text and summary, whatever id it gets."""
    from novel_agent.index.search import rows_where
    run_ticks(project, 3)
    index, _ = open_index(project)
    try:
        before = rows_where(index, "kind = 'scene' AND tick = ?", (2,))
        assert rows_where(index, "kind = 'scene' AND tick = ?", (2,)) == before   # as kept
        path = project.scene_path(2)
        text = path.read_text()
        path.write_text(text.replace("summary:", "summary:\n- The lamp is lit by hand.", 1)
                        + "\nA line added by hand.\n")
        sync(project, index)
        after = rows_where(index, "kind = 'scene' AND tick = ?", (2,))
        assert "A line added by hand." in after[0].body
        assert "The lamp is lit by hand." in after[0].meta["summary"]
        assert "A line added by hand." not in before[0].body
    finally:
        index.close()


def test_a_sync_waits_for_another_processs_write_instead_of_failing_on_it(project,
                                                                          monkeypatch):
    """The daemon ticks while the context page is built: both write the index. A sync's
    transaction used to begin with a read (its deletes of nothing began it), so a write
    that landed from elsewhere meanwhile made its next insert fail at once, 'database is
    locked', and the page a 500. It holds the write lock from its start now; the other
    write waits for it."""
    import threading

    import novel_agent.index.sync as index_sync

    run_ticks(project, 2)
    wrote: list[str] = []

    def write_elsewhere() -> None:          # as the daemon's tick would, from its process
        other = Index(project.index_db)
        try:
            with other.writing():
                other.db.execute("INSERT OR REPLACE INTO token_counts (key, tokens) "
                                 "VALUES ('elsewhere', 1)")
        finally:
            other.close()
        wrote.append("elsewhere")

    real = index_sync._insert

    def insert_while_another_writes(*args, **kwargs):    # the sync has read: its snapshot
        if not wrote and "elsewhere" not in [t.name for t in threading.enumerate()]:
            thread = threading.Thread(target=write_elsewhere, name="elsewhere")
            thread.start()
            thread.join(1.0)      # old: it commits meanwhile; now: it waits for the sync
        return real(*args, **kwargs)

    index, _ = open_index(project)
    (project.lore_dir / "bell.yaml").write_text("keys: [bell]\ncontent: The bell.\n")
    monkeypatch.setattr(index_sync, "_insert", insert_while_another_writes)
    try:
        report = sync(project, index)
        assert report.read == ["lore/bell.yaml"]
    finally:
        index.close()
    for thread in threading.enumerate():
        if thread.name == "elsewhere":
            thread.join(15)
    assert wrote == ["elsewhere"]
    assert kinds(project)["lore"] == 1
    hits = Index(project.index_db)
    try:
        assert hits.get("elsewhere") == 1
    finally:
        hits.close()


def garble_pages(path) -> None:
    """Overwrite most of every third page after the first with noise: the file still opens
    as a database (its header is whole), its tables are not."""
    data = bytearray(path.read_bytes())
    noise = random.Random(1)
    for start in range(4 * 4096 + 100, len(data) - 3000, 3 * 4096):
        data[start:start + 3000] = bytes(noise.randrange(256) for _ in range(3000))
    path.write_bytes(bytes(data))


def garble_search_blocks(path) -> None:
    """Noise in the blocks of the search table, its pages sound: what quick_check does
    not see, and a query meets."""
    with closing(sqlite3.connect(path)) as db, db:
        db.execute("UPDATE search_data SET block = randomblob(length(block)) WHERE id > 10")
        assert db.execute("PRAGMA quick_check").fetchone() == ("ok",)


def test_an_index_with_some_garbled_pages_is_rebuilt_and_the_tick_goes_on(project, cli):
    run_ticks(project, 3)
    garble_pages(project.index_db)
    out = cli("tick", "-p", str(project.root)).output
    assert "index.db was unreadable (quick_check found garbled pages: " in out, out
    assert "it is a cache and has been rebuilt" in out and "tick 4 of harbour" in out
    assert len([line for line in out.splitlines() if "index.db" in line]) == 1
    assert kinds(project)["scene"] == 4


def test_a_query_that_meets_garbled_blocks_rebuilds_the_index_and_the_tick_runs_again(project,
                                                                                      cli):
    run_ticks(project, 3)
    garble_search_blocks(project.index_db)
    out = cli("tick", "-p", str(project.root)).output
    assert "(database disk image is malformed): it is a cache and has been rebuilt" in out, out
    assert "; the tick ran again" in out and "tick 4 of harbour" in out
    assert kinds(project)["scene"] == 4
    index = Index(project.index_db)
    try:
        title = load_scene(project.scene_path(4)).title
        assert search(index, title, "scene")[0].key == "scene:4"
    finally:
        index.close()
