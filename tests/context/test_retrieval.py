"""Retrieval: older scenes and facts brought back to the writer, facts to the planner,
the recall probe, and optional embeddings through the OpenAI-compatible test server."""

from __future__ import annotations

import pytest

from novel_agent.context.retrieval import Candidate, Need, retrieval_items, score
from novel_agent.index.documents import short_hash
from novel_agent.story.decisions import Plan
from novel_agent.tick.pipeline import preview
from novel_agent.tick.session import Session
from tests.support.fake_openai import FakeOpenAIServer
from tests.support.planted import plant, write_planted, writer_prompt
from tests.support.ticking import run_ticks

WEIGHTS = {"bm25": 3.0, "pov": 0.5, "character": 1.0, "location": 1.0, "loop": 2.0,
           "recency": 0.5, "pin": 5.0, "embedding": 3.0}


# ---------------------------------------------------------------- scoring (pure)


def test_a_scene_sharing_place_people_and_words_outranks_one_sharing_only_the_pov():
    need = Need.of(300, "Mara Quill", ["Mara Quill", "Tobin Keel"], "the bell tower")
    close = Candidate("scene_012", "scene", 12, "At the tower", pov="Mara Quill",
                      location="The Bell Tower", characters=("Tobin Keel",), bm25=4.0,
                      summary=("Mara and Tobin climb the bell tower.",))
    far = Candidate("scene_200", "scene", 200, "Elsewhere", pov="Mara Quill",
                    location="the weir", bm25=0.5, summary=("Mara fishes.",))
    ranked = score([far, close], need, WEIGHTS)
    assert [s.candidate.key for s in ranked] == ["scene_012", "scene_200"]
    assert ranked[0].signals["location"] == WEIGHTS["location"]
    assert ranked[1].signals["location"] == 0


def test_a_fact_is_scored_by_the_names_its_text_says():
    need = Need.of(50, "Ilse Varga", ["Ilse Varga"], "the salt cellar")
    named = Candidate("fact:3:a", "fact", 3, text="Ilse hid a comb at the salt cellar")
    other = Candidate("fact:4:b", "fact", 4, text="Bram saw a lantern at the weir")
    by_key = {s.candidate.key: s for s in score([named, other], need, WEIGHTS)}
    assert by_key["fact:3:a"].signals["character"] == 1.0
    assert by_key["fact:3:a"].signals["location"] == 1.0
    assert by_key["fact:4:b"].signals["character"] == 0.0


def test_scenes_in_the_tiers_are_skipped_and_their_facts_only_when_in_full():
    need = Need.of(20, "Mara Quill", ["Mara Quill"], "the quay")
    cands = [Candidate("scene_015", "scene", 15, pov="Mara Quill", location="the quay"),
             Candidate("fact:15:x", "fact", 15, text="Mara Quill lost a ring at the quay"),
             Candidate("fact:18:y", "fact", 18, text="Mara Quill found a ring at the quay")]
    items = retrieval_items(score(cands, need, WEIGHTS), exclude_scenes={15, 18},
                            exclude_facts={18})
    assert [i.key for i in items] == ["fact:15:x"]


def test_a_pinned_scene_is_offered_in_full_text_first():
    c = Candidate("scene_009", "scene", 9, "The vow", text="She swore it on the rocks.",
                  summary=("A vow.",), pinned=True)
    (item,) = retrieval_items(score([c], Need.of(100), WEIGHTS), threshold=0)
    assert item.forms[0].endswith("She swore it on the rocks.")
    assert item.forms[1] == "Scene 9 — The vow\n- A vow."


# ---------------------------------------------------------------- a long story


@pytest.fixture
def planted(project):
    """A 300-scene story with 12 facts planted in its first 150 scenes."""
    probes = plant(300, 12)
    write_planted(project, 300, probes)
    return project, probes


def test_a_fact_planted_early_reaches_the_writer_when_its_place_and_person_return(planted):
    project, probes = planted
    for probe in probes[:4]:
        prompt, report = writer_prompt(project, probe.plan)
        assert probe.fact in prompt, probe
        assert report["recall"]["relevant"] >= 1
        retrieved = next(s for s in report["sections"] if s["name"] == "retrieved")
        assert retrieved["items"]


RARE = "Wenna Doyle buried the keeper's log under the cairn at the drowned chapel"


@pytest.mark.parametrize("intention, location, signal", [
    ("Mara climbs the cliff path to the drowned chapel before dawn.", "the drowned chapel",
     "location"),
    ("Mara finally tracks down Wenna Doyle in the fish market.", "the fish market", "bm25"),
])
def test_naming_only_the_place_or_only_the_person_brings_back_their_fact(planted, intention,
                                                                         location, signal):
    project, _ = planted
    facts = project.memory_dir / "facts.yaml"
    facts.write_text(facts.read_text() + f"- text: {RARE}\n  scene: 40\n")
    plan = Plan(title="Night", intention=intention, pov="Mara Quill", location=location,
                characters=["Mara Quill"])
    prompt, report = writer_prompt(project, plan)
    assert RARE in prompt
    (item,) = [i for i in report["items"] if i["key"] == f"fact:40:{short_hash(RARE)}"]
    assert item["included"] and item["section"] == "retrieved"
    assert item["reason"].startswith(signal)            # the strongest signal comes first


def test_without_retrieval_weights_the_planted_fact_stays_out(planted):
    project, probes = planted
    text = (project.project_file.read_text() +
            "context:\n  relevance: {bm25: 0, pov: 0, character: 0, location: 0, loop: 0, "
            "recency: 0, pin: 0, embedding: 0}\n")
    project.project_file.write_text(text)
    prompt, report = writer_prompt(project, probes[0].plan)
    assert probes[0].fact not in prompt
    assert report["recall"]["reached"] < report["recall"]["relevant"]


def test_a_pinned_fact_comes_back_whatever_the_scene(planted):
    project, probes = planted
    facts = project.memory_dir / "facts.yaml"
    facts.write_text(facts.read_text().replace(
        f"- text: {probes[-1].fact}\n", f"- text: {probes[-1].fact}\n  pinned: true\n"))
    plan = Plan(title="Weather", intention="Rain over the island all day.", pov="Mara Quill",
                location="the weir", characters=[])
    prompt, _ = writer_prompt(project, plan)
    assert probes[-1].fact in prompt


def test_the_planner_gets_the_facts_about_who_the_last_scenes_are_about(project):
    run_ticks(project, 6)
    with Session.open(project, project.config(), stand_in=True) as session:
        built = preview(session, "planner")
    facts = next(s for s in built.report["sections"] if s["name"] == "facts")
    assert facts["tokens"] > 0 and facts["items"]
    text = "\n".join(m["content"] for m in built.messages)
    assert "## What is known" in text and "- Fact (scene " in text


# ---------------------------------------------------------------- the recall probe


def test_the_recall_probe_is_in_the_report_in_state_and_in_status(project, cli):
    results = run_ticks(project, 8)
    recall = results[-1].reports["writer"]["recall"]
    assert set(recall) == {"relevant", "reached", "share", "missed"}
    assert 0 <= recall["reached"] <= recall["relevant"]
    rows = project.state()["recall"]
    assert [r[0] for r in rows] == list(range(1, 9))
    assert rows[-1] == [8, recall["relevant"], recall["reached"]]
    out = cli("status", "-p", str(project.root)).output
    line = next(l for l in out.splitlines() if l.startswith("recall"))
    relevant = sum(r[1] for r in rows if r[1])
    reached = sum(r[2] for r in rows if r[1])
    assert f"{reached / relevant:.0%} of the facts relevant" in line


def test_recall_falls_when_the_budget_leaves_no_room(planted):
    project, probes = planted
    _, roomy = writer_prompt(project, probes[0].plan)
    project.project_file.write_text(project.project_file.read_text() +
                                    "context:\n  retrieved_share: 0.0\n  max_prompt_tokens: 2600\n")
    prompt, tight = writer_prompt(project, probes[0].plan)
    assert roomy["recall"]["share"] > tight["recall"]["share"]
    assert probes[0].fact not in prompt
    assert tight["recall"]["relevant"] == roomy["recall"]["relevant"]


# ---------------------------------------------------------------- embeddings


def bag_of_words(vocabulary):
    def embed(text: str) -> list[float]:
        lowered = text.lower()
        return [float(lowered.count(word)) for word in vocabulary]
    return embed


def test_embeddings_through_the_test_server_add_similarity_and_are_cached(planted):
    project, probes = planted
    probe = probes[2]
    thing = probe.fact.split(" hid ")[1].split(" under ")[0].split(" behind ")[0]
    vocabulary = [w for w in thing.split() if len(w) > 3] + ["lantern", "ledger"]
    with FakeOpenAIServer(embedding_fn=bag_of_words(vocabulary)) as server:
        only_embedding = "{bm25: 0, pov: 0, character: 0, location: 0, loop: 0, recency: 0, pin: 0}"
        project.project_file.write_text(
            project.project_file.read_text() +
            f"context:\n  relevance: {only_embedding}\n"
            f"  embeddings: {{model: text-embedding-3-small, base_url: '{server.base_url}', "
            "batch_size: 50}\n")
        plan = Plan(title="The thing", intention=f"Someone remembers {thing} and says nothing.",
                    pov="Mara Quill", location="the weir", characters=[])
        prompt, report = writer_prompt(project, plan)
        calls = [r for r in server.requests if r["path"].endswith("/embeddings")]
        assert calls and all(len(r["json"]["input"]) <= 50 for r in calls)
        assert probe.fact in prompt
        embedded = sum(len(r["json"]["input"]) for r in calls)
        writer_prompt(project, plan)     # the same texts again: all from the index's cache
        again = [r for r in server.requests if r["path"].endswith("/embeddings")][len(calls):]
        assert sum(len(r["json"]["input"]) for r in again) < embedded / 10
    rows = [r for r in _ledger(project) if r["stage"] == "embeddings"]
    assert rows and rows[0]["cost"] == pytest.approx(rows[0]["prompt_tokens"] * 0.02 / 1e6)


def test_a_failing_embeddings_endpoint_leaves_retrieval_to_bm25_with_a_warning(planted):
    project, probes = planted
    with FakeOpenAIServer() as server:
        base = server.base_url
    project.project_file.write_text(
        project.project_file.read_text() +
        f"context:\n  embeddings: {{model: text-embedding-3-small, base_url: '{base}'}}\n")
    prompt, report = writer_prompt(project, probes[0].plan)
    assert probes[0].fact in prompt
    assert any("embeddings" in w and "without embeddings" in w for w in report["warnings"])


def _ledger(project):
    import json
    path = project.novel_dir / "usage.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_a_first_name_alone_names_someone_only_when_no_one_else_has_it():
    from novel_agent.context.retrieval import named
    text = "Bram saw the lantern go out."
    alone = Need.of(9, "Bram Oduya", ["Bram Oduya"])
    shared = Need.of(9, "Bram Oduya", ["Bram Oduya"], shared_first={"Bram"})
    assert named(text, alone) == {"bram oduya"}
    assert named(text, shared) == set()
    assert named("Bram Oduya saw it.", shared) == {"bram oduya"}


def test_what_happened_to_the_pov_at_a_place_stays_a_candidate_however_often_it_is_named(
        planted):
    """Bench long_run at 1,000 ticks, tick 978: recall 0.00. The facts "Mara Quill has
    seen ... at The Zedis stable" (scenes 251–487) were never candidates: the protagonist
    and the place were each named in more newer documents than retrieval reads per name.
    Documents naming the scene's people and its place together are candidates too."""
    project, _ = planted
    place, early = "the weir", "Mara Quill has seen a glass float at the weir"
    newer = "".join(f"- text: Stranger {n} keeps a token from the weir\n  scene: {200 + n}\n"
                    f"- text: Mara Quill counts boats, day {n}\n  scene: {200 + n}\n"
                    for n in range(60))
    facts = project.memory_dir / "facts.yaml"
    facts.write_text(facts.read_text() + f"- text: {early}\n  scene: 20\n" + newer)
    plan = Plan(title="Night", intention="Mara waits for the boats to come in.", pov="Mara Quill",
                location=place, characters=["Mara Quill"])
    prompt, report = writer_prompt(project, plan)
    assert early in prompt
    assert report["recall"]["share"] >= 0.9


def test_the_planners_settled_facts_are_searched_once_per_settled_tick(project, monkeypatch):
    """The search behind the planner's "What is known" runs once per settled tick (and
    again when the loops of its scenes change), and the ticks after it reuse what it
    found (the same facts, which must stay put for the prompt cache), until a file
    edited by hand is seen."""
    from novel_agent.models.offline import OfflineModel
    from novel_agent.tick import stage_prompts
    from novel_agent.tick.pipeline import tick
    searched = []
    real = stage_prompts.planner_facts
    monkeypatch.setattr(stage_prompts, "planner_facts",
                        lambda *a, **k: searched.append(k["tick"]) or real(*a, **k))
    with Session.open(project, project.config(),
                      make_model=lambda: OfflineModel(seed=0)) as session:
        for _ in range(20):
            tick(session)
        assert searched[:10] == list(range(1, 11))        # settled: the last tick, until 10
        assert set(searched[10:]) == {11} and len(searched[10:]) < 10, searched   # then 10
        assert session.remembered(("probe", 1), lambda: "made") == "made"
        assert session.remembered(("probe", 1), lambda: "again") == "made"
        assert session.remembered(("probe", 2), lambda: "next") == "next"   # one per kind
        assert session.remembered(("probe", 1), lambda: "again") == "again"
        session.sync_index()
        assert session.remembered(("probe", 1), lambda: "later") == "again"  # no edit seen
        character = next((project.memory_dir / "characters").glob("*.yaml"))
        character.write_text(character.read_text() + "pinned: true\n")     # by hand
        session.sync_index()                    # as the next tick's begin() does
        assert session.remembered(("probe", 1), lambda: "later") == "later"


def test_the_writers_settled_block_is_searched_once_per_place_tier_3_ends(project,
                                                                           monkeypatch):
    """The writer's settled block is searched for once per place tier 3 ends (and again
    when the loops of its scenes change), and the ticks after reuse it: the same items,
    the same list, until a file edited by hand is seen."""
    from novel_agent.models.offline import OfflineModel
    from novel_agent.tick import stage_prompts
    from novel_agent.tick.pipeline import tick
    searched, given = [], []
    real = stage_prompts.settled_items

    def counted(index, memory, window, upto, weights):
        searched.append(upto)
        return real(index, memory, window, upto, weights)

    monkeypatch.setattr(stage_prompts, "settled_items", counted)
    real_of = stage_prompts.settled_of
    monkeypatch.setattr(stage_prompts, "settled_of", lambda session, memory: (
        lambda upto, window: given.append((upto, real_of(session, memory)(upto, window)))
        or given[-1][1]))
    with Session.open(project, project.config(),
                      make_model=lambda: OfflineModel(seed=0)) as session:
        for _ in range(25):
            tick(session)
    ends = [upto for upto, _ in given]
    assert ends[-4:] == [20] * 4 and ends[12:20] == [10] * 8, ends
    assert len(searched) < len(given) - 8, (searched, ends)      # reused, mostly
    later = [items for upto, items in given if upto == 20]
    assert later[0] and all(items is later[0] for items in later[-4:])


def test_the_settled_block_is_chosen_from_what_the_index_held_up_to_its_tick(project):
    """The writer's settled block is a function of the scenes and facts up to where tier 3
    ends: the index growing past it (here by 60 facts naming the same people and place,
    scenes 13 on) changes neither the documents read nor the names' weights nor the
    items, byte for byte."""
    from novel_agent.index.recall import settled_items
    from novel_agent.index.search import any_of, information_upto, told_by
    from novel_agent.index.sync import open_index, sync
    from novel_agent.story.memory.read import load_memory
    from novel_agent.story.scenes import SceneReader

    run_ticks(project, 12)
    reader = SceneReader(project.scenes_dir)
    window = [reader(t) for t in range(6, 11)]
    names = sorted({n for s in window for n in (s.pov, *s.characters, s.location) if n})
    weights = project.config().context.relevance

    def settled(index):
        memory = load_memory(project.memory_dir)
        return ([r.key for n in names for r in told_by(index, any_of([n]), ("scene", "fact"),
                                                        40, 10)],
                information_upto(index, names, 10),
                [(i.key, i.forms, i.score) for i in settled_items(index, memory, window, 10,
                                                                  weights)])
    index, _ = open_index(project)
    try:
        before = settled(index)
        assert before[0] and before[2]
        facts = project.memory_dir / "facts.yaml"
        facts.write_text(facts.read_text() + "".join(
            f"- text: {names[n % len(names)]} hears a bell, night {n}\n  scene: {13 + n}\n"
            for n in range(60)))
        sync(project, index)
        assert index.db.execute("SELECT COUNT(*) FROM docs WHERE tick > 12").fetchone()[0] >= 60
        assert settled(index) == before
    finally:
        index.close()


def test_the_pov_is_told_of_the_last_fact_of_a_text_whatever_the_facts_hold():
    """pov_knowledge finds each retrieved fact's memory fact by its text (stripped,
    lowercased; the last of a text, as before), among facts whose text may not be one."""
    from novel_agent.context.items import Item
    from novel_agent.context.retrieval import Scored
    from novel_agent.index.recall import pov_knowledge
    from novel_agent.story.memory.store import Memory

    def fact(key, text, tick=3):
        item = Item(key, (f"- Fact (scene {tick}): {text}",), 1.0, why="bm25 1.00")
        return item, Scored(Candidate(key, "fact", tick, text=text), 1.0)

    memory = Memory(facts=[
        {"text": "The map is forged.", "scene": 2, "witnesses": ["Mara Quill"]},
        {"text": 42, "scene": 2},
        {"text": "  the map is FORGED. ", "scene": 3, "witnesses": ["Tobin Keel"]},
        {"text": "Tobin owes the harbour.", "scene": 3},
        {"scene": 4}])
    pairs = [fact("f1", "The map is forged."), fact("f2", "Tobin owes the harbour."),
             fact("f3", "42")]
    out = pov_knowledge([i for i, _ in pairs], [s for _, s in pairs], memory, "Mara Quill")
    assert out[0].forms == ("- Mara does not know (scene 3): The map is forged.",)  # the last
    assert out[1] == pairs[1][0]            # no witnesses: everyone's
    assert out[2] == pairs[2][0]            # a text that is a number, read as one
    memory.facts[1]["text"] = "The map is forged."     # every text a string now
    memory.facts[2]["witnesses"] = ["Mara Quill"]
    assert pov_knowledge([pairs[0][0]], [pairs[0][1]], memory, "Mara Quill") == [pairs[0][0]]
