"""The shortlists choose what the full scans choose (context/shortlist.py): on random
memories, the same items (keys, forms, scores, ranks, reasons), in the same order, and
the same count left out."""

from __future__ import annotations

import random
from types import SimpleNamespace

import pytest

from novel_agent.context.builders import as_of, planner_focus
from novel_agent.context.items import Pool, bounded, choose
from novel_agent.context.relevance import (
    Focus,
    character_entries,
    location_entries,
    loop_entries,
    loop_words,
    name_entries,
    overdue,
    relationship_entries,
)
from novel_agent.context.scene_pools import scene_loops, scene_names, sharing_entry
from novel_agent.context.shortlist import (
    OpenLoops,
    reach,
    relevant_loops,
    settled_pairs,
    settled_people,
    settled_places,
)
from novel_agent.story.memory.store import Memory

FIRST = ["Mara", "Tobin", "Ilse", "Bram", "Ada", "Vane", "Kor", "Ely"]
LAST = ["Quill", "Keel", "Varga", "Ost", "Lamet", ""]
PLACES = ["the quay", "The Bell Tower", "weir", "Salt Cellar", "mill"]


def name(rng: random.Random) -> str:
    return f"{rng.choice(FIRST)} {rng.choice(LAST)}".strip()


def tick_value(rng: random.Random, tick: int, plain: bool = False):
    """Mostly a tick, now and then what a hand edit leaves (never, when `plain`)."""
    if plain:
        return rng.randint(0, tick)
    return rng.choice([rng.randint(0, tick)] * 8 + [None, str(rng.randint(1, tick))])


def random_memory(rng: random.Random, tick: int, size: int, plain: bool = False) -> Memory:
    """`plain`: every tick an int and every loop's scenes a list of them, as a tick
    writes them (the shortlists' quick paths), else now and then what a hand edit leaves."""
    people = {}
    for n in range(size):
        c = {"id": f"c{n}", "name": name(rng), "description": rng.choice(["a clerk", ""]),
             "first_seen": tick_value(rng, tick, plain),
             "last_seen": tick_value(rng, tick, plain),
             "state": rng.choice(["", "wet", "asleep at the quay"])}
        if rng.random() < 0.2:
            c["aliases"] = rng.sample([name(rng), "", None, "The Keeper"], rng.randint(1, 3))
        if rng.random() < 0.05:
            c["pinned"] = rng.choice([True, "yes"])
        if rng.random() < 0.05:
            del c["name"]
        if rng.random() < 0.2:      # what the audit records: dead or absent (since when)
            c.update(status=rng.choice(["dead", "absent", "alive"]),
                     status_in=tick_value(rng, tick, plain), status_how="drowned")
        if rng.random() < 0.3:      # ... where, holding what
            c.update(place=rng.choice(PLACES), place_in=tick_value(rng, tick, plain),
                     holds=rng.sample(["a key", "a map"], rng.randint(0, 2)))
        people[f"c{n}"] = c
    places = {f"p{n}": {"id": f"p{n}", "name": rng.choice(PLACES) + rng.choice(["", " 2"]),
                        "first_seen": tick_value(rng, tick), "last_seen": tick_value(rng, tick),
                        "pinned": rng.random() < 0.05}
              for n in range(size // 3)}
    pairs = [{"a": name(rng), "b": name(rng), "kind": "rivals",
              "since": tick_value(rng, tick), "updated_in": tick_value(rng, tick)}
             for _ in range(size // 3)]
    loops = []
    for n in range(size):
        opened = rng.randint(1, tick)
        loop = {"id": f"l{n}", "description": f"what {name(rng)} hid at {rng.choice(PLACES)}",
                "status": rng.choice(["open"] * 5 + ["resolved"]), "opened_in": opened,
                "scenes": sorted(rng.sample(range(opened, tick + 1), min(3, tick + 1 - opened)))}
        if rng.random() < 0.1 and not plain:
            loop["scenes"] = rng.choice([[], None, ["x", opened]])
        if rng.random() < 0.05:
            loop["pinned"] = True
        if rng.random() < 0.05 and not plain:
            loop.pop("status")
        loops.append(loop)
    rng.shuffle(loops)
    return Memory(characters=people, locations=places, relationships=pairs, loops=loops)


def random_scenes(rng: random.Random, first: int, last: int) -> list:
    return [SimpleNamespace(tick=t, pov=rng.choice([name(rng), ""]),
                            characters=[name(rng) for _ in range(rng.randint(0, 3))],
                            location=rng.choice(PLACES + [""]))
            for t in range(first, last + 1)]


def shown(items) -> list:
    return [(i.key, i.forms, i.score, i.rank, i.keep, i.why) for i in items]


def cases(count: int, plain: bool = False):
    rng = random.Random(20)
    for _ in range(count):
        tick = rng.choice([5, 30, 61, 200] + ([6000] if plain else []))   # (ages past the
        memory = random_memory(rng, tick, rng.choice([3, 20, 80]), plain)  # float's grain)
        anchor = max(0, tick - rng.randint(1, 9))
        history = random_scenes(rng, max(1, anchor - 29), anchor)
        recent = random_scenes(rng, anchor + 1, tick - 1)
        yield rng, tick, memory, anchor, history, recent


@pytest.mark.parametrize("floor,keep", [(0.25, 1), (0.25, 3), (0.6, 2), (0.01, 1)])
def test_the_settled_shortlists_choose_what_bounded_chooses_of_all_of_memory(floor, keep):
    for rng, _, memory, anchor, history, _ in cases(60):
        focus = planner_focus(memory, history[-rng.randint(1, 5):], anchor + 1, 30)
        then = as_of(memory, history, anchor)
        for fast, slow in (
                (settled_people(memory, history, anchor, focus, floor, keep),
                 bounded(character_entries(then, focus), floor, keep)),
                (settled_places(memory, history, anchor, focus, floor, keep),
                 bounded(location_entries(then, focus), floor, keep)),
                (settled_pairs(memory, anchor, focus, floor, keep),
                 bounded(relationship_entries(then, focus), floor, keep))):
            assert shown(fast[0]) == shown(slow[0]) and fast[1] == slow[1]


@pytest.mark.parametrize("plain", [False, True])
@pytest.mark.parametrize("floor,keep", [(0.25, 3), (0.25, 1), (0.6, 2)])
def test_the_loops_shortlist_chooses_what_bounded_chooses_of_every_open_loop(floor, keep,
                                                                             plain):
    chosen = touched = 0
    for rng, tick, memory, _, history, recent in cases(80, plain):
        after = rng.choice([5, 30])
        focus = planner_focus(memory, recent[-3:] or history[-3:], tick, after)
        opened = OpenLoops(memory, focus, {s.tick for s in recent[-3:] or history[-3:]},
                           {s.tick for s in history})
        assert set(opened.touched[0]) == focus.loops                      # planner_focus's
        touched += len(focus.loops)
        assert set(opened.touched[1]) == planner_focus(memory, history, tick, after).loops
        fast = relevant_loops(memory, focus, floor, keep, opened=opened)
        slow = bounded(loop_entries(memory, focus), floor, keep)
        assert shown(fast.items) == shown(slow[0]) and fast.unlisted == slow[1]
        assert fast.any_overdue == any(overdue(l, tick, after) for l in memory.open_loops())
        chosen += len(fast.items)
    assert chosen > 200 and touched > 50         # the cases choose something


def test_what_is_seen_before_the_reach_scores_under_the_floor_on_recency():
    from novel_agent.context.relevance import recency
    for floor in (0.25, 0.6, 0.01, 0.999):
        edge = reach(100, floor)
        assert recency(100, edge - 1) < floor <= recency(100, edge + 1)


def chosen(pool, cap, level):
    taken, notes, used = choose(pool, cap, level, lambda text: len(text.split()))
    return [(shown([i])[0], form) for i, form in taken], notes, used


@pytest.mark.parametrize("plain", [False, True])
def test_the_extractors_shortlists_fill_their_pools_as_every_entry_would(plain):
    """The best loops and characters made into entries, the rest as a tail: whatever the
    share (room for all, for a few, for none) and the compaction level, each pool takes
    the same items in the same forms and notes the rest the same way."""
    rng = random.Random(7)
    tails = 0
    for _, tick, memory, _, _, recent in cases(40, plain):
        plan = recent[-1] if recent else SimpleNamespace(pov="Mara Quill", characters=[],
                                                         location="weir")
        focus = Focus.of(tick, [plan.pov, *plan.characters], [plan.location])
        words = {w for l in rng.sample(memory.loops, min(5, len(memory.loops)))
                 for w in l["description"].lower().split() if len(w) >= 5}
        words |= set(rng.sample(["opened", "scene", "overdue", "close", "ledger"], 2))
        every = tuple(sharing_entry(e, len(words & loop_words(l, tick, focus.overdue_after)))
                      for e, l in zip(loop_entries(memory, focus), memory.open_loops()))
        names = tuple(name_entries(memory, focus))
        for keep in (1, 4, 16):
            loops, more_loops = scene_loops(memory, focus, words, keep)
            people, more_people = scene_names(memory, focus, keep)
            tails += bool(more_loops) + bool(more_people)
            for cap in (0, 3, 40, 400, 10_000):
                for level in (0, 2, 3):
                    assert chosen(Pool("loops", "L", (), 0, min_items=3, limit=6,
                                       entries=loops, tail=more_loops), cap, level) == chosen(
                        Pool("loops", "L", (), 0, min_items=3, limit=6, entries=every),
                        cap, level)
                    assert chosen(Pool("people", "P", (), 0, limit=10, entries=people,
                                       tail=more_people), cap, level) == chosen(
                        Pool("people", "P", (), 0, limit=10, entries=names), cap, level)
    assert tails > 50


def test_the_quick_readers_read_what_the_relevance_helpers_read():
    """seen_by is in_view, first_seen_of is first_seen, whatever a name or a tick holds."""
    from novel_agent.context.relevance import first_seen, in_view
    from novel_agent.context.shortlist import first_seen_of, seen_by
    rng = random.Random(11)
    odd = ["", None, " ", "The Keeper", "mara quill", 5, "Mara  Quill."]
    for _ in range(400):
        c = {"id": rng.choice(["c1", "mara_quill", 7])}
        if rng.random() < 0.8:
            c["name"] = rng.choice([name(rng), *odd])
        if rng.random() < 0.3:
            c["aliases"] = rng.sample([name(rng), *odd], rng.randint(0, 3))
        if rng.random() < 0.9:
            c["first_seen"] = rng.choice([3, 0, None, "12", True, 40])
        focus = Focus.of(30, [name(rng) for _ in range(rng.randint(0, 6))] +
                         rng.sample(["Mara Quill", "the keeper", "  ", "7"], 2))
        assert seen_by(focus.names, c) == in_view(focus, c)
        assert first_seen_of(c) == first_seen(c)


@pytest.mark.parametrize("plain", [False, True])
def test_the_column_readers_answer_as_the_helpers_do_item_by_item(plain):
    """seen_after is first_seen_of(item) > tick for each item, and OpenLoops.marked is
    marked_late of its overdue loops, whatever a tick holds (a hand edit's None or "12")."""
    from novel_agent.context.relevance import marked_late
    from novel_agent.context.shortlist import first_seen_of, seen_after
    for rng, tick, memory, anchor, _, _ in cases(40, plain):
        people = list(memory.characters.values())
        assert seen_after(people, anchor) == [n for n, c in enumerate(people)
                                              if first_seen_of(c) > anchor]
        for shown in (0, 1, 3, 50):
            focus = Focus(tick, overdue_after=rng.choice([1, 5, 30]))
            opened = OpenLoops(memory, focus)
            assert opened.marked(focus, shown) == marked_late(opened.late, focus, shown,
                                                              overdue_only=True)


def test_the_loops_naming_someone_are_those_the_pattern_finds_loop_by_loop():
    """naming looks for the names in one text of every loop's description: it finds the
    loops the pattern finds in each (a name inside a longer word, at either end, twice,
    in consecutive loops; a name with a line break, which no description holds)."""
    from novel_agent.context.relevance import naming_pattern
    from novel_agent.context.shortlist import naming
    from novel_agent.text.names import normalize_name
    rng = random.Random(4)
    words = ["mara", "quill", "maraquill", "the", "ann", "x", "mara quill", "quill.", "ke el"]
    for _ in range(300):
        loops = [{"id": f"l{n}", "status": "open", "opened_in": 1, "scenes": [1],
                  "description": " ".join(rng.choice(words) for _ in range(rng.randint(0, 5)))}
                 for n in range(rng.randint(0, 12))]
        names = frozenset(rng.sample(["mara quill", "quill", "ann", "", "el\nmara", "x q",
                                      "mara"], rng.randint(0, 4)))
        opened = OpenLoops(Memory(loops=loops), Focus(5, names))
        pattern = naming_pattern(names)
        assert naming(opened, names) == {
            n for n, loop in enumerate(opened.open)
            if pattern is not None and pattern.search(normalize_name(loop["description"]))}
