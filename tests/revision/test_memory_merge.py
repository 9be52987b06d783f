"""What a revision changes, laid over the memory files (novel_agent.revision.merge)."""

from __future__ import annotations

from novel_agent.revision.merge import merge_memory, merged_text
from novel_agent.story.memory.store import Memory


def person(**fields):
    return {"id": "anselm", "name": "Anselm Vey", "state": "", **fields}


def memory(*facts, **characters):
    return Memory(characters=dict(characters), facts=[{"text": t, "scene": s} for t, s in facts])


def test_a_revision_that_changes_nothing_gives_the_files_back():
    base = memory(("The mill burned", 2), anselm=person())
    ours = memory(("The mill burned", 2), ("Added by hand", 9), anselm=person(traits=["limps"]))
    assert merge_memory(base, ours, base.copy()) == ours


def test_what_the_revision_changes_lands_and_what_was_edited_by_hand_stays():
    base = memory(("The mill burned", 2), ("The key is brass", 3), anselm=person(state="waits"))
    ours = memory(("The mill burned", 2), ("The key is brass", 3), ("Added by hand", 9),
                  anselm=person(state="waits", traits=["limps"]))
    theirs = memory(("The mill burned", 2), ("The key is silver", 3),
                    anselm=person(state="waits", status="dead", status_in=3),
                    quentin={"id": "quentin", "name": "Quentin", "first_seen": 3})
    out = merge_memory(base, ours, theirs)
    assert out.characters["anselm"] == person(state="waits", status="dead", status_in=3,
                                              traits=["limps"])
    assert out.characters["quentin"]["first_seen"] == 3
    assert [f["text"] for f in out.facts] == ["The mill burned", "The key is silver",
                                              "Added by hand"]


def test_where_both_changed_a_field_the_hand_edit_wins():
    base = memory(anselm=person(state="waits"))
    ours = memory(anselm=person(state="sleeps (by hand)"))
    theirs = memory(anselm=person(state="runs"))
    assert merge_memory(base, ours, theirs).characters["anselm"]["state"] == "sleeps (by hand)"


def test_an_item_removed_by_hand_stays_removed_and_one_the_revision_removes_goes():
    base = memory(anselm=person(), petra={"id": "petra", "name": "Petra"})
    ours = memory(petra={"id": "petra", "name": "Petra"})            # Anselm deleted by hand
    theirs = memory(anselm=person(state="changed"))                  # Petra never introduced
    out = merge_memory(base, ours, theirs)
    assert out.characters == {}


def test_the_clock_file_three_ways():
    assert merged_text("day: 2\n", "day: 2\n", "day: 1\n") == "day: 1\n"
    assert merged_text("day: 2\n", "day: 5\n", "day: 1\n") == "day: 5\n"
    assert merged_text("", "", "day: 1\n") == "day: 1\n"
