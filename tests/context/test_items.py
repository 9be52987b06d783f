"""Selection by item (context/items.py): a section with items is never emptied, even when
its best item's barest form is over the section's share; items marked `keep` stay."""

from __future__ import annotations

from novel_agent.context.briefing import propose_briefing
from novel_agent.context.builders import planner_briefing
from novel_agent.context.engine import fit
from novel_agent.context.items import Entry, Item, Pool, Tail, bounded, choose, select
from novel_agent.context.prompts import render_stage
from novel_agent.text.tokens import TokenCounter
from tests.support import story_factory as sf

COUNTER = TokenCounter("gpt-4o")
count = COUNTER.count
LONG = sf.prose(120, 3)        # a barest form of about 150 tokens


def test_the_best_item_is_kept_in_its_barest_form_when_even_that_is_over_the_share():
    best = Item("overall", (sf.prose(400, 2), LONG), score=9.0)
    other = Item("minor", ("a short line",), score=1.0)
    taken, notes, used = choose(Pool("overall", "The story so far", (best, other), 0.01),
                                cap=20, level=0, count=count)
    assert count(LONG) > 20
    assert taken == [(best, 1)] and used == count(LONG) + 1
    assert [(n.key, n.included, n.form, n.reason) for n in notes] == [
        ("overall", True, "line", "kept: the section is never emptied"),
        ("minor", False, "full", "over the overall share (20 tokens) at compaction level 0")]


def test_items_marked_keep_stay_whatever_their_rank():
    scenes = tuple(Item(f"scene_{t}", (sf.prose(300, t), LONG), score=1.0, rank=(t,), keep=True)
                   for t in (1, 2, 3))
    taken, notes, _ = choose(Pool("scenes", "Scenes 1–3", scenes, 0.1), cap=50, level=2,
                             count=count)
    assert [(item.key, form) for item, form in taken] == [("scene_1", 1), ("scene_2", 1),
                                                          ("scene_3", 1)]
    assert all(n.included for n in notes)


def test_min_items_holds_even_for_items_under_the_relevance_floor():
    loops = tuple(Item(f"loop_{n}", (f"[loop_{n}] a thread", f"loop_{n}"), score=0.1, rank=(n,))
                  for n in range(5))
    taken, notes, _ = choose(Pool("loops", "Open plot loops", loops, 0.1, min_items=3,
                                  min_score=0.25), cap=1000, level=0, count=count)
    assert [item.key for item, _ in taken] == ["loop_0", "loop_1", "loop_2"]
    assert [n.reason for n in notes if not n.included] == [
        "not relevant to this scene (score under 0.25)"] * 2


def test_select_gives_the_next_pool_what_the_first_left_and_empties_none():
    pools = [Pool("overall", "The story so far", (Item("overall", (LONG,), 9.0, keep=True),),
                  0.02),
             Pool("loops", "Open plot loops", (Item("loop_1", ("[loop_1] the door", "loop_1"),
                                                    1.0),), 0.02)]
    chosen = select(pools, budget=400, level=3, count=count)
    assert [s.text for s in chosen.sections] == [LONG, "loop_1"]
    assert chosen.used == count(LONG) + 1 + count("loop_1") + 1


def test_the_planners_story_so_far_stays_when_its_barest_form_is_over_its_share():
    overall = sf.prose(600, 4).replace(".", "")    # one long sentence: its shortened form
                                                   # (80 words) is over 8% of 1,000
    briefing = planner_briefing(sf.story(), sf.memory(), [], tick=5,
                                shares={"overall": 0.08, "loops": 0.1, "characters": 0.08,
                                        "recent": 0.08, "relationships": 0.05,
                                        "locations": 0.03, "now": 0.04, "facts": 0.05,
                                        "lore": 0.04}, overall_summary=overall)
    bare = briefing.pools[0].items[0].forms[-1]
    assert count(bare) > 0.08 * 1000
    fitted = fit(propose_briefing(briefing, COUNTER, 1000), render_stage, COUNTER, 1000,
                 (0.5, 0.65, 0.8))
    assert fitted.tokens <= 1000 and fitted.truncated == []
    assert fitted.context.text("overall") == bare


def test_a_pool_bounded_at_its_floor_chooses_what_the_whole_pool_chooses():
    """Only the items over the relevance floor (and the best min_items under it) are
    made: at every level and share the choice and its forms are those of the pool
    holding every candidate, and one note counts the candidates left unmade."""
    scores = [0.9, 0.1, 0.3, 0.05, 2.0, 0.26, 0.1, 0.2, 0.24, 1.1] * 30
    made: list[int] = []

    def entry(n: int, score: float):
        def make() -> Item:
            made.append(n)
            return Item(f"c{n}", (f"card {n} " + "word " * (n % 7), f"line {n}", f"n{n}"),
                        score, (n,))
        return Entry(score, (n,), make)

    whole = Pool("characters", "Characters", tuple(e[2]() for e in
                                                   (entry(n, s) for n, s in enumerate(scores))),
                 0.1, min_items=3, limit=12, min_score=0.25)
    made.clear()
    items, unlisted = bounded((entry(n, s) for n, s in enumerate(scores)), 0.25, 3)
    assert len(made) == len(items) == 5 * 30 + 3 and unlisted == len(scores) - len(items)
    part = Pool(whole.name, whole.title, items, whole.share, min_items=3, limit=12,
                min_score=0.25, unlisted=unlisted)
    for level in range(4):
        for cap in (15, 60, 400):
            taken, notes, used = choose(whole, cap, level, count)
            taken_b, notes_b, used_b = choose(part, cap, level, count)
            assert (taken_b, used_b) == (taken, used)
            assert [n for n in notes_b if n.included] == [n for n in notes if n.included]
            assert notes_b[-1].reason == (f"{unlisted} more not relevant to this scene "
                                          "(score under 0.25), not listed")
    empty = [Entry(0.1, (n,), lambda n=n: Item(f"l{n}", (f"loop {n}",), 0.1, (n,)))
             for n in range(9)]
    items, unlisted = bounded(empty, 0.25, 3)         # nothing relevant: the best three
    assert [i.key for i in items] == ["l0", "l1", "l2"] and unlisted == 6


def test_a_pool_of_entries_makes_only_the_items_it_may_take():
    """A pool with a limit holding its candidates as entries (the extractor's names and
    loops) takes what the same pool of items takes; those ranked after it is full are
    never made, only counted."""
    made: list[int] = []

    def entry(n: int):
        score = (n * 7919) % 101 / 10

        def make() -> Item:
            made.append(n)
            return Item(f"n{n}", (f"Person {n}",), score, (n,))
        return Entry(score, (n,), make)

    whole = Pool("characters", "Known characters", tuple(entry(n)[2]() for n in range(300)),
                 0.1, joiner=", ", limit=40)
    made.clear()
    lazy = Pool("characters", "Known characters", (), 0.1, joiner=", ", limit=40,
                entries=tuple(entry(n) for n in range(300)))
    taken, notes, used = choose(whole, 30, 0, count)      # too small to fill: all tried
    assert choose(lazy, 30, 0, count) == (taken, notes, used)
    taken, notes, used = choose(whole, 500, 0, count)     # full at 40: the rest not made
    made.clear()
    lazy_taken, lazy_notes, lazy_used = choose(lazy, 500, 0, count)
    assert (lazy_taken, lazy_used) == (taken, used) and len(taken) == 40 == len(made)
    assert lazy_notes[:-1] == notes[:40] and lazy_notes[-1].reason == (
        "260 more: the 40 most relevant are taken, not listed")


def test_an_entry_whose_least_text_is_over_what_is_left_is_not_made():
    """An entry says a text none of its forms counts fewer tokens than (a name: itself;
    a loop: its "[id]"): once that is over what the pool has left, it is counted, not
    made, and the pool takes what the pool of all items takes."""
    made: list[int] = []

    def entry(n: int) -> Entry:
        name = f"Person {'Quill ' * (n % 5)}{n}"

        def make() -> Item:
            made.append(n)
            return Item(f"n{n}", (name,), 1.0 + (n % 3), (n,))
        return Entry(1.0 + (n % 3), (n,), make, least=name)

    whole = Pool("characters", "Known characters", tuple(entry(n).make() for n in range(200)),
                 0.1, joiner=", ", limit=40)
    lazy = Pool("characters", "Known characters", (), 0.1, joiner=", ", limit=40,
                entries=tuple(entry(n) for n in range(200)))
    taken, notes, used = choose(whole, 25, 0, count)
    made.clear()
    lazy_taken, lazy_notes, lazy_used = choose(lazy, 25, 0, count)
    assert (lazy_taken, lazy_used) == (taken, used) and 0 < len(taken) < 10
    assert len(made) < 60
    assert [n for n in lazy_notes if n.included] == [n for n in notes if n.included]
    assert lazy_notes[-1].reason.endswith("more over the characters share (25 tokens) at "
                                          "compaction level 0, not listed")


def test_a_tail_of_entries_is_chosen_from_as_if_they_were_entries_of_the_pool():
    """Entries ranked after all of a pool's others, given as a Tail, are chosen as the
    same entries in the pool: the same items in the same forms, the same notes, at every
    share and level, min_items and limit; and they are never made when the pool is full
    before them or has less room left than any of their least texts takes."""
    import random
    rng = random.Random(5)

    def entry(n: int, score: float) -> Entry:
        name = f"[loop_{'x' * rng.randint(0, 30)}_{n}]"
        forms = (f"{name} " + "word " * rng.randint(0, 20), name)
        return Entry(score, (n,), lambda: Item(f"l{n}", forms, score, (n,)), least=name)

    skipped = 0
    for _ in range(150):
        scores = sorted((round(rng.random() * 3, 1) for _ in range(rng.randint(1, 40))),
                        reverse=True)
        every = [entry(n, s) for n, s in enumerate(scores)]
        cut = rng.randint(0, len(every))
        cut = next((n for n in range(cut, len(every)) if scores[n] < scores[cut - 1]),
                   len(every)) if cut else 0          # the tail scores under the rest
        head, rest = every[:cut], every[cut:]
        for limit, least_items, cap, level in ((rng.choice([0, 3, 12]), rng.choice([1, 3]),
                                                rng.choice([rng.randint(0, 40), 120, 900]),
                                                rng.randint(0, 3)) for _ in range(6)):
            whole = Pool("loops", "L", (), 0, min_items=least_items, limit=limit,
                         entries=tuple(every))
            walked: list[int] = []
            lazy = Pool("loops", "L", (), 0, min_items=least_items, limit=limit,
                        entries=tuple(head),
                        tail=Tail(len(rest), lambda rest=rest, walked=walked: walked.append(1)
                                  or iter(rest),
                                  lambda rest=rest: [e.least for e in rest]) if rest else None)
            for counted in (count, lambda text: len(text) // 4 + 1):
                assert choose(lazy, cap, level, counted) == choose(whole, cap, level, counted)
            skipped += bool(rest) and not walked
    assert skipped > 100


def test_the_planners_story_so_far_tells_every_summary_the_oldest_in_short():
    """A story so far over its share (select_tier3 keeps the coarsest cut whole): the
    newest summaries in full, the oldest shortened, none left out, in story order."""
    so_far = [(f"arc_{n}", f"### Scenes {n * 10 + 1}–{n * 10 + 10}\n" + sf.prose(120, n))
              for n in range(4)]
    shares = {"overall": 0.1, "loops": 0.1, "characters": 0.1, "recent": 0.1,
              "relationships": 0.05, "locations": 0.05, "now": 0.05, "facts": 0.05, "lore": 0.05}
    briefing = planner_briefing(sf.story(), sf.memory(), [], tick=41, shares=shares,
                                story_so_far=so_far)
    fitted = fit(propose_briefing(briefing, COUNTER, 3000), render_stage, COUNTER, 3000,
                 (0.5, 0.65, 0.8))
    forms = {n.key: n.form for n in fitted.notes if n.section == "overall" and n.included}
    assert forms == {"arc_3": "full", "arc_2": "full", "arc_1": "line", "arc_0": "line"}
    text = fitted.context.text("overall")
    assert [text.index(f"### Scenes {n * 10 + 1}–") for n in range(4)] == sorted(
        text.index(f"### Scenes {n * 10 + 1}–") for n in range(4))


def test_within_a_total_each_pool_keeps_its_best_before_any_takes_its_share():
    """Items chosen within a total (a prompt over its budget at the leanest level: the
    room its pinned parts leave): the pools' shares are shares of it, and what each pool
    keeps (its best, in its barest form) is set aside first, so the first pool cannot
    take the room the last one's best needs (issue 50, item 12)."""
    story = Pool("overall", "The story so far",
                 (Item("overall", (sf.prose(200, 1), sf.prose(30, 1)), 9.0, keep=True),), 0.5)
    people = Pool("characters", "Characters", tuple(
        Item(f"c{n}", (f"Person {n} — " + sf.prose(20, n), f"Person {n}"), 5.0 - n / 10, (n,))
        for n in range(12)), 0.3)
    loops = Pool("loops", "Open plot loops", tuple(
        Item(f"l{n}", (f"[l{n}] " + sf.prose(15, n), f"[l{n}]"), 3.0 - n / 10, (n,))
        for n in range(6)), 0.2, min_items=3)
    pools = [story, people, loops]
    free = select(pools, budget=2000, level=3, count=count)
    total = free.used // 2
    tight = select(pools, budget=2000, level=3, count=count, total=total)
    assert tight.used <= total < free.used
    texts = {s.name: s.text for s in tight.sections}
    assert all(texts.values()), texts                  # no section emptied
    assert texts["loops"].count("[l") == 3             # its min_items, kept
    assert texts["overall"] == sf.prose(30, 1)         # the story so far, in short
    squeezed = select(pools, budget=2000, level=3, count=count,
                      total=count(sf.prose(30, 1)) + 1 + count("Person 0") + 1)
    assert [s.text for s in squeezed.sections] == [sf.prose(30, 1), "Person 0", ""]
    notes = [n for n in squeezed.notes if n.section == "loops"]
    assert notes and all(n.reason.startswith("over the room the prompt leaves") for n in notes)


def test_squeezed_the_story_is_told_first_and_in_its_tight_forms_only_then():
    """A squeezed prompt sets aside every keep item (the story so far, the recent scenes:
    no scene left out) before the best of the other sections, and only then may an item
    take its `tight` forms (an arc's heading); unsqueezed, never."""
    arcs = Pool("overall", "The story so far", tuple(
        Item(f"arc_{n}", (f"### Scenes {n}0–{n}9\n" + sf.prose(120, n), sf.prose(40, n)), 10.0,
             (n,), keep=True, tight=(f"### Scenes {n}0–{n}9",)) for n in range(1, 4)), 0.1)
    recent = Pool("recent", "Recent scenes", tuple(
        Item(f"scene_{t}", (sf.prose(60, t), f"Scene {t} — The Door"), float(t), (t,),
             keep=True) for t in range(40, 46)), 0.2)
    loops = Pool("loops", "Open plot loops", tuple(
        Item(f"l{n}", (f"[l{n}] " + sf.prose(15, n), f"[l{n}]"), 3.0 - n, (n,))
        for n in range(4)), 0.1, min_items=3)
    need = sum(count(f"### Scenes {n}0–{n}9") + 1 for n in range(1, 4)) + \
        sum(count(f"Scene {t} — The Door") + 1 for t in range(40, 46)) + count("[l0]") + 1
    tight = select([arcs, recent, loops], budget=2000, level=3, count=count, total=need)
    texts = [s.text for s in tight.sections]
    assert texts[0] == "\n".join(f"### Scenes {n}0–{n}9" for n in range(1, 4))
    assert texts[1].count("The Door") == 6 and texts[2] == "[l0]"
    loose = select([arcs, recent, loops], budget=200, level=3, count=count)
    assert "### Scenes 10–19\n" not in loose.sections[0].text    # the short form, not tight
    assert all(sf.prose(40, n) in loose.sections[0].text for n in range(1, 4))
