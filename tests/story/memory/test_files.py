"""Memory on disk in a layout a commit can write in part: one file per character, place,
loop and relationship (the file name is the id), the new facts appended to facts.yaml;
projects in the old layout (memory/loops.yaml, relationships.yaml) moved once."""

from __future__ import annotations

import pytest
import yaml

from novel_agent import crashpoints
from novel_agent.files import dump_yaml
from novel_agent.history.hooks import opened
from novel_agent.models.offline import OfflineModel
from novel_agent.revision.revise import revise
from novel_agent.story.memory.files import stage_memory
from novel_agent.story.memory.read import load_memory
from novel_agent.story.memory.store import Memory, add_fact, add_relationship, open_loop, upsert_character
from novel_agent.story.project.recovery import migrate_memory
from novel_agent.tick.pipeline import tick
from novel_agent.tick.session import Session
from tests.support.clirunner import invoke
from tests.support.projects import annotate, comments_of
from tests.support.scripted import ScriptedModel
from tests.support.story_factory import prose
from tests.support.ticking import NOW, run_ticks


def big_memory() -> Memory:
    memory = Memory()
    for n in range(60):
        upsert_character(memory, f"Person {n}", tick=n)
        open_loop(memory, f"question number {n}", tick=n)
        add_fact(memory, f"fact number {n}", tick=n)
    for n in range(59):
        add_relationship(memory, f"Person {n}", f"Person {n + 1}", "friends", tick=n)
    return memory


def ops(txn, root):
    return {str(path.relative_to(root)): kind for path, (kind, _) in txn.ops.items()}


def test_a_commit_writes_only_what_changed_and_appends_the_new_facts(project):
    memory_dir = project.memory_dir
    memory = big_memory()
    txn = project.transaction()
    stage_memory(txn, memory, memory_dir)
    txn.commit()
    before = load_memory(memory_dir)
    after = before.copy()
    upsert_character(after, "Person 3", tick=70, state="asleep")
    open_loop(after, "question number 70", tick=70)
    after.loops[5]["scenes"].append(70)
    add_relationship(after, "Person 1", "Person 30", "rivals", tick=70)
    add_fact(after, "a new fact", tick=70)
    add_fact(after, "another: with a colon", tick=70)
    txn = project.transaction()
    stage_memory(txn, after, memory_dir, before)
    assert ops(txn, project.root) == {
        "memory/characters/person_3.yaml": "write",
        f"memory/loops/{after.loops[5]['id']}.yaml": "write",
        "memory/loops/question_number_70.yaml": "write",
        "memory/relationships/person_1--person_30.yaml": "write",
        "memory/facts.yaml": "append"}
    txn.commit()
    assert (memory_dir / "facts.yaml").read_text() == dump_yaml({"facts": after.facts})
    assert load_memory(memory_dir) == after


@pytest.mark.parametrize("text", [
    "facts: []\n",                                         # as `novel new` wrote it
    "facts:\n  - text: fact number 0\n    scene: 0\n",      # indented by hand
    "facts:\n- text: fact number 0\n  scene: 0\nnotes: mine\n",   # a key after the list
    "facts:\n- {text: fact number 0, scene: 0}",           # no newline at the end
])
def test_facts_in_a_form_an_append_would_break_are_written_whole(project, text):
    facts = project.memory_dir / "facts.yaml"
    facts.write_text(text)
    before = load_memory(project.memory_dir)
    after = before.copy()
    add_fact(after, "a new fact", tick=2)
    txn = project.transaction()
    stage_memory(txn, after, project.memory_dir, before)
    assert ops(txn, project.root) == {"memory/facts.yaml": "write"}
    txn.commit()
    assert load_memory(project.memory_dir).facts == after.facts


def test_a_fact_changed_or_dropped_rewrites_the_file(project):
    memory = big_memory()
    txn = project.transaction()
    stage_memory(txn, memory, project.memory_dir)
    txn.commit()
    before = load_memory(project.memory_dir)
    after = before.copy()
    after.facts.pop(3)
    add_fact(after, "a new fact", tick=70)
    txn = project.transaction()
    stage_memory(txn, after, project.memory_dir, before)
    assert ops(txn, project.root) == {"memory/facts.yaml": "write"}


def test_ticks_append_to_facts_yaml_by_hand_edits_kept(project):
    run_ticks(project, 3)
    facts = project.memory_dir / "facts.yaml"
    facts.write_text("# my notes stay\n" + facts.read_text() + "# and so does this\n")
    run_ticks(project, 3)
    text = facts.read_text()
    assert text.startswith("# my notes stay\nfacts:\n") and "# and so does this\n- text:" in text
    assert len(load_memory(project.memory_dir).facts) > 3


# -- an author's comments ---------------------------------------------------------------


def test_a_commit_keeps_the_comments_and_key_order_of_the_files_it_writes_over(project):
    memory_dir = project.memory_dir
    txn = project.transaction()
    stage_memory(txn, big_memory(), memory_dir)
    txn.commit()
    mine, theirs = memory_dir / "characters" / "person_3.yaml", \
        memory_dir / "characters" / "person_4.yaml"
    said = annotate(mine)
    mine.write_text(mine.read_text().replace("state: ''\nfirst_seen: 3\n",
                                             "first_seen: 3\nstate: ''\n"))   # the author's order
    order = list(yaml.safe_load(mine.read_text()))
    before = load_memory(memory_dir)
    after = before.copy()
    for name in ("Person 3", "Person 4"):
        upsert_character(after, name, tick=70, state="asleep", traits=["wary"])
    add_fact(after, "a new fact", tick=70)
    txn = project.transaction()
    stage_memory(txn, after, memory_dir, before)
    txn.commit()
    assert comments_of(mine) == said
    assert list(yaml.safe_load(mine.read_text())) == order
    assert load_memory(memory_dir) == after
    assert theirs.read_text() == dump_yaml(after.characters["person_4"])   # as ever


def test_facts_written_whole_keep_their_comments(project):
    txn = project.transaction()
    stage_memory(txn, big_memory(), project.memory_dir)
    txn.commit()
    facts = project.memory_dir / "facts.yaml"
    facts.write_text("# the facts, checked by me\n" + facts.read_text().replace(
        "- text: fact number 5\n", "# five is wrong\n- text: fact number 5\n"))
    before = load_memory(project.memory_dir)
    after = before.copy()
    after.facts.pop(3)
    after.facts[4]["text"] = "fact number five"
    txn = project.transaction()
    stage_memory(txn, after, project.memory_dir, before)
    txn.commit()
    text = facts.read_text()
    assert text.startswith("# the facts, checked by me\nfacts:\n")
    assert "# five is wrong\n- text: fact number five\n" in text
    assert load_memory(project.memory_dir).facts == after.facts


def test_ticks_keep_the_comments_of_the_memory_files_they_change(project):
    run_ticks(project, 3)
    files = sorted(project.memory_dir.glob("*/*.yaml"))
    said = {path: annotate(path) for path in files}
    was = {path: yaml.safe_load(path.read_text()) for path in files}
    run_ticks(project, 3)
    changed = [path for path in files if yaml.safe_load(path.read_text()) != was[path]]
    assert changed                                 # a tick wrote over annotated files
    assert {path: comments_of(path) for path in files} == said


# -- an author's own keys ----------------------------------------------------------------

ABOVE = 'checked_up_to: 3\nsource: "the ledger, vol. 2"\n'        # before the list
BELOW = "notes:\n- 'scene 2 and scene 4 disagree'\nrevisit: [3, 4]\n"   # after it


@pytest.mark.parametrize("where", ["above", "below", "both"])
def test_an_authors_top_level_keys_in_facts_yaml_stay_byte_for_byte(project, where):
    txn = project.transaction()
    stage_memory(txn, big_memory(), project.memory_dir)
    txn.commit()
    facts = project.memory_dir / "facts.yaml"
    above, below = (ABOVE if where != "below" else ""), (BELOW if where != "above" else "")
    facts.write_text(above + facts.read_text() + below)
    before = load_memory(project.memory_dir)
    after = before.copy()
    add_fact(after, "a new fact", tick=70)               # appended (put in before `notes:`)
    txn = project.transaction()
    stage_memory(txn, after, project.memory_dir, before)
    assert ops(txn, project.root) == {"memory/facts.yaml": "append" if not below else "write"}
    txn.commit()
    text = facts.read_text()
    assert text.startswith(above + "facts:\n") and text.endswith(
        "- text: a new fact\n  scene: 70\n" + below)
    assert load_memory(project.memory_dir).facts == after.facts
    later = after.copy()
    later.facts[4]["text"] = "fact number five"          # an older fact changed: written whole
    txn = project.transaction()
    stage_memory(txn, later, project.memory_dir, after)
    txn.commit()
    text = facts.read_text()
    assert text.startswith(above + "facts:\n") and text.endswith(below)
    assert "- text: fact number five\n" in text
    assert load_memory(project.memory_dir).facts == later.facts


def test_an_authors_keys_and_layout_survive_ticks_revise_and_rewind(project, cli):
    """Fails on main: facts.yaml was written back as `facts:` alone (the author's keys
    dropped), and a card as dump_yaml lays it out (`mood: "grim"` became `mood: grim`)."""
    run_ticks(project, 3)
    facts = project.memory_dir / "facts.yaml"
    facts.write_text(ABOVE + facts.read_text() + BELOW)
    cards = sorted((project.memory_dir / "characters").glob("*.yaml"))
    mine = 'mood: "grim"\nsigns: [a limp, salt in the hair]\n'
    for card in cards:
        card.write_text(card.read_text() + mine)
    run_ticks(project, 3)
    text = facts.read_text()
    assert text.startswith(ABOVE + "facts:\n") and text.endswith(BELOW)
    changed = [card for card in cards if yaml.safe_load(card.read_text())["last_seen"] > 3]
    assert changed and all(mine in card.read_text() for card in cards)
    model = ScriptedModel(otherwise=OfflineModel(seed=0))
    model.add("extractor", {"summary": ["A lantern is found at the weir."],
                            "facts": ["A drowned lantern lies at the weir"], "characters": [],
                            "loops_opened": [], "loops_resolved": [], "relationships": []})
    with opened(project), Session.open(project, project.config(), make_model=lambda: model,
                                       now=lambda: NOW) as session:
        revision = revise(session, 4, prose(220, 4) + "\n\nA drowned lantern lay at the weir.\n")
    assert "memory/facts.yaml" in revision.changed          # written whole
    text = facts.read_text()
    assert text.startswith(ABOVE + "facts:\n") and text.endswith(BELOW)
    assert all(mine in card.read_text() for card in cards)
    cli("rewind", "5", "-p", "harbour")
    text = facts.read_text()
    assert text.startswith(ABOVE + "facts:\n") and text.endswith(BELOW)
    assert all(mine in card.read_text() for card in cards)


# -- the old layout ----------------------------------------------------------------------


def old_layout(project) -> Memory:
    """Rewrite the project's loops and relationships as the old list files (relationships
    without ids, as they were; one loop without an id, one whose id names no file)."""
    memory = load_memory(project.memory_dir)
    for kind in ("loops", "relationships"):
        for path in (project.memory_dir / kind).glob("*.yaml"):
            path.unlink()
        (project.memory_dir / kind).rmdir()
    rels = [{k: v for k, v in rel.items() if k != "id"} for rel in memory.relationships]
    loops = [dict(loop) for loop in memory.loops]
    del loops[0]["id"]
    loops[1]["id"] = "where/when"
    (project.memory_dir / "loops.yaml").write_text(dump_yaml({"loops": loops}))
    (project.memory_dir / "relationships.yaml").write_text(dump_yaml({"relationships": rels}))
    return memory


def same_story(a: Memory, b: Memory) -> bool:
    def strip(items):
        return sorted(sorted((k, str(v)) for k, v in item.items() if k != "id")
                       for item in items)
    return (strip(a.loops), strip(a.relationships), a.facts, a.characters) == \
        (strip(b.loops), strip(b.relationships), b.facts, b.characters)


def test_an_old_project_is_moved_to_the_new_layout_once_with_a_notice(project):
    run_ticks(project, 8)
    memory = old_layout(project)
    assert same_story(load_memory(project.memory_dir), memory)   # read as it is, meanwhile
    loops, rels = len(memory.loops), len(memory.relationships)
    first = invoke("status", "-p", str(project.root))
    assert first.exit_code == 0, first.output
    assert f"note: moved memory/loops.yaml ({loops} loops) to memory/loops/ and " \
        f"memory/relationships.yaml ({rels} relationships) to memory/relationships/: one " \
        "file each, so a tick writes only what changed\n" in first.stderr
    assert not (project.memory_dir / "loops.yaml").exists()
    assert not (project.memory_dir / "relationships.yaml").exists()
    moved = load_memory(project.memory_dir)
    assert same_story(moved, memory)
    ids = sorted(p.stem for p in (project.memory_dir / "loops").glob("*.yaml"))
    assert len(ids) == loops and "where/when" not in ids
    assert "note: moved" not in invoke("status", "-p", str(project.root)).stderr
    assert invoke("doctor", "-p", str(project.root)).output == "harbour: clean\n"
    run_ticks(project, 1)
    assert project.tick() == 9


def test_doctor_names_the_old_layout_and_fix_moves_it(project):
    run_ticks(project, 4)
    old_layout(project)
    out = invoke("doctor", "-p", str(project.root)).output
    assert "problem  memory/loops.yaml is in the old layout (one file for all loops)\n" \
           "         fix: move each to its own file under memory/loops/ (any command that " \
           "opens the project does) (--fix does it)\n" in out
    assert "memory/relationships.yaml is in the old layout" in out
    fixed = invoke("doctor", "-p", str(project.root), "--fix")
    assert fixed.exit_code == 0, fixed.output
    assert not (project.memory_dir / "loops.yaml").exists()


class Killed(Exception):
    """Stands for SIGKILL: nothing after the crash point runs, the journal stays."""


def kill() -> None:
    raise Killed()


def test_a_move_cut_by_a_crash_is_finished_by_the_next_command(project):
    run_ticks(project, 6)
    memory = old_layout(project)
    crashpoints.arm("mid_commit", kill)
    try:
        with pytest.raises(Killed):
            migrate_memory(project)
    finally:
        crashpoints.disarm()
    assert (project.memory_dir / "loops.yaml").exists()      # half moved
    first = invoke("status", "-p", str(project.root))
    assert "note: recovered: a commit was interrupted and has been finished" in first.stderr
    assert not (project.memory_dir / "loops.yaml").exists()
    assert same_story(load_memory(project.memory_dir), memory)
    assert invoke("doctor", "-p", str(project.root)).output == "harbour: clean\n"


def test_a_tick_that_finds_the_old_layout_moves_it_in_its_own_commit(project):
    """A session opened without the reconcile that moves it (`project.locked()`)."""
    from novel_agent.models.offline import OfflineModel
    run_ticks(project, 5)
    memory = old_layout(project)
    with project.locked(), Session.open(project, project.config(),
                                        make_model=lambda: OfflineModel(seed=0)) \
            as session:
        tick(session)
    assert not (project.memory_dir / "loops.yaml").exists()
    assert not (project.memory_dir / "relationships.yaml").exists()
    after = load_memory(project.memory_dir)
    assert len(after.loops) >= len(memory.loops)
    assert len(after.relationships) >= len(memory.relationships)
    assert invoke("doctor", "-p", str(project.root)).output == "harbour: clean\n"
