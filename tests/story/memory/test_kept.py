"""Memory kept between ticks (story/memory/kept.py) reads as memory read whole: the same
items in the same order, field for field, after commits and after edits by hand."""

from __future__ import annotations

import operator
import os
import random
import re

import pytest

from novel_agent.errors import FileFormatError
from novel_agent.story.memory.files import stage_memory
from novel_agent.story.memory.kept import KeptMemory
from novel_agent.story.memory.read import read_memory
from novel_agent.story.memory.store import (
    add_fact,
    add_relationship,
    find_person,
    open_loop,
    upsert_character,
    upsert_location,
)
from novel_agent.story.project.journal import Transaction

KINDS = ("characters", "locations", "loops", "relationships", "facts")


def shape(value):
    """A value with its dicts' key order and its scalars' types made visible."""
    if isinstance(value, dict):
        return [(k, shape(v)) for k, v in value.items()]
    if isinstance(value, list):
        return [shape(v) for v in value]
    return type(value).__name__, value


def same_as_whole(kept: KeptMemory, memory_dir):
    work, files = kept.read()
    fresh, fresh_files = read_memory(memory_dir)
    for kind in KINDS:
        assert shape(getattr(work, kind)) == shape(getattr(fresh, kind)), kind
        assert shape(getattr(files, kind)) == shape(getattr(fresh_files, kind)), kind
    return work, files


def commit(root, memory, before):
    txn = Transaction(root, root / ".novel" / "txn")
    stage_memory(txn, memory, root / "memory", before)
    txn.commit()


def a_tick(rng: random.Random, memory, tick: int) -> None:
    """What a stress tick does to memory: new people, places, a loop, facts, updates."""
    for _ in range(rng.randint(1, 3)):
        first, last = rng.choice(["Ada", "Bel", "Cor", "Dun"]), rng.choice(["Vane", "Oak", "Zu"])
        upsert_character(memory, f"{first} {last}{rng.randint(1, 40)}", tick=tick,
                         traits=[rng.choice(["wary", "bold"])], state=f"at {tick}")
    upsert_location(memory, f"The {rng.choice(['Mill', 'Quay', 'Arch'])} {tick}", tick=tick)
    open_loop(memory, f"Who {rng.choice(['hid', 'took'])} the {tick} key?", tick=tick)
    if memory.loops:
        loop = rng.choice(memory.loops)
        loop.setdefault("scenes", []).append(tick)
    people = list(memory.characters.values())
    if len(people) > 1:
        a, b = rng.sample(people, 2)
        add_relationship(memory, a["name"], b["name"], rng.choice(["kin", "rivals"]), tick=tick)
    add_fact(memory, f"The bell rang {tick} times.", tick=tick)


def test_kept_memory_reads_as_memory_read_whole_tick_after_tick(tmp_path):
    root, rng = tmp_path, random.Random(7)
    (root / "memory").mkdir()
    kept = KeptMemory(root / "memory")
    for tick in range(1, 40):
        work, files = same_as_whole(kept, root / "memory")
        a_tick(rng, work, tick)
        commit(root, work, files)
        kept.landed(work)
    same_as_whole(kept, root / "memory")
    assert kept.whole_reads == 1                 # the first; every other read in part


def test_an_edit_by_hand_between_ticks_is_read(tmp_path):
    root, rng = tmp_path, random.Random(3)
    (root / "memory").mkdir()
    kept = KeptMemory(root / "memory")
    for tick in range(1, 8):
        work, files = kept.read()
        a_tick(rng, work, tick)
        commit(root, work, files)
        kept.landed(work)
    folder = root / "memory"
    someone = sorted((folder / "characters").iterdir())[2]
    with someone.open("a") as handle:                         # in place: the same inode
        handle.write("description: a keeper of bees\n")
    (folder / "characters" / "zed.yaml").write_text("name: Zed Hollow\n")      # a new one
    loops = sorted((folder / "loops").iterdir())
    loops[1].unlink()                                          # one gone
    text = re.sub(r"opened_in: \d+", "opened_in: 0", loops[3].read_text())
    loops[3].write_text(text)                                  # one moved in the order
    (folder / "facts.yaml").write_text("facts:\n- text: The well is dry.\n  scene: 2\n")
    work, _ = same_as_whole(kept, folder)
    assert work.loops[0]["id"] == loops[3].stem
    assert work.characters[someone.stem]["description"] == "a keeper of bees"
    assert find_person(work, "Zed Hollow") is work.characters["zed"]
    assert work.facts == [{"text": "The well is dry.", "scene": 2}]
    assert kept.whole_reads == 1


def test_a_reader_that_never_writes_copies_only_the_facts_appended_since(tmp_path):
    root, rng = tmp_path, random.Random(5)
    (root / "memory").mkdir()
    writer, reader = KeptMemory(root / "memory"), KeptMemory(root / "memory")
    for tick in range(1, 12):
        work, files = writer.read()
        a_tick(rng, work, tick)
        commit(root, work, files)
        writer.landed(work)
        older = list(reader.work.facts) if reader.work is not None else []
        read, _ = same_as_whole(reader, root / "memory")     # (the bench's story server)
        reader.landed(read)
        assert all(map(operator.is_, read.facts, older))      # the kept ones not copied again
        assert len(read.facts) == tick
    assert reader.whole_reads == 1


def test_a_tick_that_did_not_land_leaves_its_changes_out_of_the_next_read(tmp_path):
    root = tmp_path
    (root / "memory").mkdir()
    kept = KeptMemory(root / "memory")
    work, files = kept.read()
    upsert_character(work, "Mara Quill", tick=1)
    commit(root, work, files)
    kept.landed(work)
    work, _ = kept.read()
    upsert_character(work, "Tobin Reed", tick=2)       # a tick that failed: nothing written
    work.characters["mara_quill"]["state"] = "drowned"
    again, _ = same_as_whole(kept, root / "memory")
    assert set(again.characters) == {"mara_quill"} and again.characters["mara_quill"]["state"] == ""
    assert kept.whole_reads == 2


def test_a_file_that_cannot_be_read_fails_the_read_and_the_next_one_reads_whole(tmp_path):
    root = tmp_path
    (root / "memory").mkdir()
    kept = KeptMemory(root / "memory")
    work, files = kept.read()
    upsert_character(work, "Mara Quill", tick=1)
    commit(root, work, files)
    kept.landed(work)
    path = root / "memory" / "characters" / "mara_quill.yaml"
    good = path.read_text()
    path.write_text("name: [unclosed\n")
    with pytest.raises(FileFormatError):
        kept.read()
    path.write_text(good)
    os.utime(path, ns=(1, 1))
    same_as_whole(kept, root / "memory")
    assert kept.whole_reads == 2


def test_lookups_through_kept_memory_find_what_came_in_the_middle(tmp_path):
    """The indexes of story/memory/lookup.py live on with kept memory: a name and a loop that
    sort into the middle of what is kept are found where they are."""
    root = tmp_path
    (root / "memory").mkdir()
    kept = KeptMemory(root / "memory")
    work, files = kept.read()
    for name in ("Mara Quill", "Zora Quill"):
        upsert_character(work, name, tick=1)
    open_loop(work, "Who took the key?", tick=2)
    assert find_person(work, "Zora")["id"] == "zora_quill"     # indexed now
    commit(root, work, files)
    kept.landed(work)
    work, files = kept.read()
    upsert_character(work, "Bram Quill", tick=3)
    open_loop(work, "Why is the lamp out?", tick=1)     # sorts before the key's loop
    commit(root, work, files)
    kept.landed(work)
    work, _ = same_as_whole(kept, root / "memory")
    assert list(work.characters) == ["bram_quill", "mara_quill", "zora_quill"]
    assert find_person(work, "Bram")["id"] == "bram_quill"
    assert [l["description"] for l in work.loops] == ["Why is the lamp out?", "Who took the key?"]
    assert open_loop(work, "Why is the lamp out?", tick=4) == (work.loops[0], False)
    assert open_loop(work, "Who took the key?", tick=4) == (work.loops[1], False)


def test_a_loop_a_tick_changed_in_place_is_found_by_its_new_words(tmp_path):
    """A loop's index lives on with kept memory: a description a tick changed in place
    (the index not told) is indexed again once the tick landed."""
    root = tmp_path
    (root / "memory").mkdir()
    kept = KeptMemory(root / "memory")
    work, files = kept.read()
    for n in range(3):
        open_loop(work, f"Who took key {n}?", tick=1)
    commit(root, work, files)
    kept.landed(work)
    work, files = kept.read()
    assert work.find_loop("Who took key 1?") is work.loops[1]      # indexed now
    work.loops[1]["description"] = "Who took the brass key?"
    commit(root, work, files)
    kept.landed(work)
    work, _ = same_as_whole(kept, root / "memory")
    assert work.find_loop("Who took the brass key?") is work.loops[1]
    assert work.loops[1]["id"] == "who_took_key_1"           # its id, made of the old words


@pytest.mark.parametrize("watch", [True, False])
def test_told_which_files_moved_kept_memory_reads_as_memory_read_whole(tmp_path, watch):
    """A session's reads are told, by the history's look (the kernel's names, or what a
    whole look found changed), which files may have moved: only they are looked at, and
    the memory is the one a whole read makes, commits and edits by hand alike."""
    import time

    from novel_agent.history.seen import SeenFiles
    from novel_agent.story.memory.kept import item_files
    from novel_agent.story.memory.read import FOLDERS

    root, rng = tmp_path, random.Random(11)
    folder = root / "memory"
    folder.mkdir()
    seen = SeenFiles(root, time.time_ns, watch=watch)
    kept, last = KeptMemory(folder), None
    told = []
    for tick in range(1, 30):
        seen.look()
        now = seen.folders_now(f"memory/{kind}/" for kind in FOLDERS)
        moved = seen.moved_since(last)
        told.append(moved is not None)
        work, files = kept.read(given={kind: now[f"memory/{kind}/"] for kind in FOLDERS},
                                moved=None if moved is None else item_files(moved))
        last = seen.looks
        fresh, fresh_files = read_memory(folder)
        for kind in KINDS:
            assert shape(getattr(work, kind)) == shape(getattr(fresh, kind)), (tick, kind)
            assert shape(getattr(files, kind)) == shape(getattr(fresh_files, kind)), kind
        a_tick(rng, work, tick)
        commit(root, work, files)
        kept.landed(work)
        if tick % 7 == 0:                          # edits by hand between ticks
            someone = sorted((folder / "characters").iterdir())[1]
            with someone.open("a") as handle:
                handle.write(f"description: edited at {tick}\n")
            sorted((folder / "loops").iterdir())[0].unlink()
            (folder / "characters" / f"hand_{tick}.yaml").write_text(f"name: Hand {tick}\n")
    seen.close()
    assert told[0] is False and all(told[1:])      # after the first look, always told
    assert kept.whole_reads == 1


def test_a_file_not_named_as_moved_is_not_looked_at(tmp_path):
    """The trust `moved` asks for: a file left out of it is taken as it was."""
    import time

    from novel_agent.history.seen import SeenFiles
    from novel_agent.story.memory.read import FOLDERS

    root, rng = tmp_path, random.Random(5)
    folder = root / "memory"
    folder.mkdir()
    kept = KeptMemory(folder)
    work, files = kept.read()
    a_tick(rng, work, 1)
    commit(root, work, files)
    kept.landed(work)
    kept.read()
    kept.landed(kept.work)
    someone = sorted((folder / "characters").iterdir())[0]
    someone.write_text(someone.read_text() + "description: by hand\n")
    seen = SeenFiles(root, time.time_ns, watch=False)
    seen.look()
    given = seen.folders_now(f"memory/{kind}/" for kind in FOLDERS)
    given = {kind: given[f"memory/{kind}/"] for kind in FOLDERS}
    work, _ = kept.read(given=given, moved={})
    assert work.characters[someone.stem]["description"] != "by hand"
    kept.landed(work)
    work, _ = kept.read(given=given, moved={"characters": [someone.name]})
    assert work.characters[someone.stem]["description"] == "by hand"
    seen.close()
