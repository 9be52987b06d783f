"""Checkpoint and arc summaries: the tree, tier 3, faithfulness, failures, the CLI."""

from __future__ import annotations

import json
import re
import sqlite3

import yaml

from novel_agent.context.tier3 import select_tier3, tier3_budget
from novel_agent.errors import ModelError
from novel_agent.files import read_front_matter
from novel_agent.models.limits import limits_for
from novel_agent.story.faithfulness import Mention, coverage
from novel_agent.story.scenes import load_scenes
from novel_agent.story.summaries import DocCache, SummaryDoc, SummaryTree, load_tree
from novel_agent.tick.session import counter_for
from novel_agent.tick.stages.summarize import fits
from tests.support.clirunner import invoke
from tests.support.scripted import ScriptedModel
from tests.support.ticking import run_ticks


def configure(project, **sections):
    """Add settings to the project's project.yaml."""
    data = yaml.safe_load(project.project_file.read_text())
    for section, values in sections.items():
        data.setdefault(section, {}).update(values)
    project.project_file.write_text(yaml.safe_dump(data))


def ticks(project, model, n, seed=0):
    """n ticks: `model` (a ScriptedModel) answers what it has queued, the offline model
    of `seed` the rest; a model of None is the offline model alone."""
    return run_ticks(project, n, model, offline_seed=seed)


def without(tree: SummaryTree, names: list[str]) -> SummaryTree:
    """The tree as it was before the arcs `names` were made."""
    return SummaryTree({k: d for k, d in tree.docs.items() if k not in names}, tree.overall,
                       {k: p for k, p in tree.parent.items() if p not in names})


def covered_ticks(docs):
    return [t for d in docs if d.kind != "overall" for t in range(d.first, d.last + 1)]


def test_sixty_ticks_grow_a_tree_whose_top_fits(project):
    configure(project, generation={"checkpoint_summary_interval": 5},
              context={"tier3_share": 0.03})
    config = project.config()
    count, budget = counter_for(config).count, tier3_budget(config, limits_for(config))
    model, arcs_made = ScriptedModel(), []
    for _ in range(60):
        (result,) = ticks(project, model, 1, seed=2)
        made = [d.name for d in result.summary.made] if result.summary else []
        points = [n for n in made if n.startswith("checkpoint_")]
        assert points == ([f"checkpoint_{result.tick:03d}"] if result.tick % 5 == 0 else [])
        tree = load_tree(project.summaries_dir)
        assert fits(tree, budget, count)                 # the top always fits ...
        arcs = [n for n in made if n.startswith("arc_")]
        if arcs:                                          # ... and needed each new arc
            assert not fits(without(tree, arcs[-1:]), budget, count)
            arcs_made.append(result.tick)
        if result.tick == 59:
            before_last = select_tier3(tree, budget, count)
    assert arcs_made and arcs_made[0] > 5
    tree = load_tree(project.summaries_dir)
    assert [d.name for d in tree.checkpoints()] == [f"checkpoint_{t:03d}" for t in range(5, 61, 5)]
    assert covered_ticks(tree.checkpoints()) == list(range(1, 61))
    for doc in tree.docs.values():
        assert doc.meta["coverage"] >= 0.8 and not doc.edited
        assert doc.meta["created"] == "2025-03-01T12:00:00+00:00"
        assert doc.meta["scenes"] == [f"scene_{t:03d}" for t in range(doc.first, doc.last + 1)]
    for arc in (d for d in tree.docs.values() if d.kind == "arc"):
        assert covered_ticks(tree.children(arc)) == list(range(arc.first, arc.last + 1))
    # the context uses a cut that covers every scene exactly once
    chosen = select_tier3(tree, budget, count)
    assert covered_ticks(chosen) == list(range(1, 61))
    assert chosen[0].kind == "arc" and "overall" not in [d.kind for d in chosen]
    # the writer of tick 60 was told the arc that covers tick 1, and not the overall
    # summary next to it (two summaries of one range)
    first = before_last[0]
    assert first.kind == "arc" and first.first == 1
    prompt = "\n".join(m["content"] for m in model.calls("writer")[-1].messages)
    assert first.block() in prompt
    assert tree.overall is not None and "### In short" not in prompt


def test_select_tier3_takes_the_newest_covering_level_that_fits():
    def doc(name, first, last, words, level=0, covers=()):
        kind = "arc" if level else "checkpoint"
        return SummaryDoc(name, kind, first, last, " ".join(["w"] * words), level, covers)

    c = [doc(f"checkpoint_{t:03d}", t - 4, t, 10) for t in (5, 10, 15, 20)]
    arc = doc("arc_001", 1, 10, 10, 1, ("checkpoint_005", "checkpoint_010"))
    overall = SummaryDoc("overall", "overall", 1, 20, "w " * 5, -1)
    tree = SummaryTree({d.name: d for d in [*c, arc]}, overall,
                       {"checkpoint_005": "arc_001", "checkpoint_010": "arc_001"})
    count = lambda text: len(text.split())            # noqa: E731
    cost = {d.name: count(d.block()) + 1 for d in [*c, arc, overall]}

    def names(budget, upto=None):
        return [d.name for d in select_tier3(tree, budget, count, upto=upto)]

    everything = sum(cost[d.name] for d in c)
    assert names(everything) == [d.name for d in c]          # never the overall next to them
    roots = cost["arc_001"] + cost["checkpoint_015"] + cost["checkpoint_020"]
    assert names(roots) == ["arc_001", "checkpoint_015", "checkpoint_020"]
    # the coarsest cut over: the overall summary tells the same ticks, if it fits
    assert names(roots - 1) == ["overall"]
    # neither fits: the coarsest cut stays whole, over the budget (the caller tells its
    # oldest in short), so no scene goes untold
    assert names(cost["overall"] - 1) == ["arc_001", "checkpoint_015", "checkpoint_020"]
    assert names(1, upto=15) == ["arc_001", "checkpoint_015"]
    # ... unless the coarsest cut fits a stretch of the budget: the whole story, coarsely
    assert [d.name for d in select_tier3(tree, cost["overall"] - 1, count, stretch=roots)] == [
        "arc_001", "checkpoint_015", "checkpoint_020"]
    # up to a tick: what lies after it is left to the recent tiers
    assert names(everything, upto=15) == ["checkpoint_005", "checkpoint_010", "checkpoint_015"]
    assert names(cost["arc_001"], upto=10) == ["arc_001"]
    assert names(everything, upto=10) == ["checkpoint_005", "checkpoint_010"]


def test_a_failed_summarizer_leaves_the_checkpoint_pending(project):
    configure(project, generation={"checkpoint_summary_interval": 2})
    model = ScriptedModel().fail("summarizer",
                                                              ModelError("server down"))
    first, second = ticks(project, model, 2, seed=1)
    assert first.summary is None
    assert project.tick() == 2 and project.scene_path(2).is_file()
    assert not (project.summaries_dir / "checkpoint_002.md").exists()
    assert project.state()["pending_checkpoints"] == [2]
    failure = second.summary.failure
    assert str(failure) == "checkpoint 2 is pending: the summarizer failed: server down"
    assert failure.checkpoint == 2 and failure.pending == [2]
    assert isinstance(failure.__cause__, ModelError)
    assert "pending     checkpoints at ticks 2" in invoke("status", "-p", "harbour").output
    [third] = ticks(project, model, 1, seed=1)
    assert [d.name for d in third.summary.made] == ["checkpoint_002", "overall"]
    assert "pending_checkpoints" not in project.state()
    meta, _ = read_front_matter(project.summaries_dir / "checkpoint_002.md")
    assert (meta["first"], meta["last"], meta["scenes"]) == (1, 2, ["scene_001", "scene_002"])


def test_novel_summarize_makes_what_is_pending(project):
    configure(project, generation={"checkpoint_summary_interval": 2})
    ticks(project, ScriptedModel().fail("summarizer", ModelError("down")), 2)
    assert project.state()["pending_checkpoints"] == [2]
    out = invoke("summarize", "-p", "harbour").output.splitlines()
    assert re.fullmatch(r"checkpoint_002   ticks 1–2 +\d+ tokens  coverage 100%", out[0])
    assert re.fullmatch(r"overall          ticks 1–2 +\d+ tokens", out[1])
    assert len(out) == 2 and "pending_checkpoints" not in project.state()
    with sqlite3.connect(project.index_db) as db:    # novel summarize records its calls too
        rows = db.execute("SELECT tick, COUNT(*), SUM(prompt_tokens) FROM usage "
                          "WHERE stage = 'summarizer' AND error = '' GROUP BY tick").fetchall()
        failed = db.execute("SELECT COUNT(*) FROM usage WHERE error != ''").fetchone()[0]
    assert [(tick, n) for tick, n, _ in rows] == [(2, 2)] and rows[0][2] > 0
    assert failed == 1                               # the tick's failed call is in the ledger
    assert invoke("summarize", "-p", "harbour").output == (
        "nothing to summarize: every checkpoint owed is made\n")


def test_a_summary_that_leaves_things_out_is_asked_again(project):
    configure(project, generation={"checkpoint_summary_interval": 3})
    model = ScriptedModel().add("summarizer", "- Things happen.")
    ticks(project, model, 3, seed=4)
    retry = model.calls("summarizer")[1].messages[-1]["content"]
    assert "## Your summary\n- Things happen." in retry
    missing = retry.split("## What it must also name\n", 1)[1]
    assert missing.startswith("It leaves out: ")
    for scene in load_scenes(project.scenes_dir):
        assert scene.pov in missing
    log = project.log_dir / "tick_003_summarizer_checkpoint_003_retry.json"
    assert json.loads(log.read_text())["tokens"] <= json.loads(log.read_text())["budget"]
    meta, body = read_front_matter(project.summaries_dir / "checkpoint_003.md")
    assert meta["coverage"] == 1.0 and meta["missing"] == []
    assert body != "- Things happen."


def test_low_coverage_is_recorded_and_warned(project):
    configure(project, generation={"checkpoint_summary_interval": 3})
    model = (ScriptedModel().add("summarizer", "- Things happen.")
             .add("summarizer", "- Still vague."))
    *_, last = ticks(project, model, 3, seed=4)
    meta, body = read_front_matter(project.summaries_dir / "checkpoint_003.md")
    assert body == "- Still vague." and meta["coverage"] == 0.0 and meta["missing"]
    [warning] = last.summary.warnings
    assert warning.startswith("checkpoint_003 names 0% of what its range established "
                              "(below summary_min_coverage 80%); missing: ")


def test_coverage_names_characters_loops_and_facts():
    items = [Mention("character", "Mara Quill"), Mention("character", "Jory Ashdown"),
             Mention("character", "Jory Morrow"), Mention("loop", "who sent a sealed letter"),
             Mention("fact", "Tobin has seen a brass key at the glasshouse")]
    text = "Mara and Jory Morrow wonder who sent the sealed letters; Tobin saw a brass key."
    share, missing = coverage(text, items)
    assert [i.label for i in missing] == ["Jory Ashdown",
                                          "Tobin has seen a brass key at the glasshouse"]
    assert share == 0.6


def test_hand_edited_summaries_are_kept_until_rebuilt(project):
    configure(project, generation={"checkpoint_summary_interval": 3})
    ticks(project, None, 3, seed=5)
    path = project.summaries_dir / "checkpoint_003.md"
    head, body = path.read_text().split("---\n\n")
    edited = f"{head}---\n\n(edited) {body}"
    path.write_text(edited)
    out = invoke("summarize", "-p", "harbour", "--checkpoint", "3").output
    assert out == "kept checkpoint_003: edited by hand (--rebuild overwrites it)\n"
    assert path.read_text() == edited
    assert "hand-edited checkpoint_003" in invoke("status", "-p", "harbour").output
    invoke("summarize", "-p", "harbour", "--rebuild")
    assert "(edited)" not in path.read_text()
    assert not load_tree(project.summaries_dir).docs["checkpoint_003"].edited


def test_broken_summary_front_matter_is_one_line_naming_the_file(project):
    configure(project, generation={"checkpoint_summary_interval": 3})
    ticks(project, None, 3, seed=5)
    path = project.summaries_dir / "checkpoint_003.md"
    path.write_text(path.read_text().replace("first: 1", "first: [1", 1))
    for args in (["status"], ["summarize"], ["tick"]):
        result = invoke(*args, "-p", "harbour")
        assert result.exit_code == 1
        assert result.output.splitlines()[-1].startswith(f"Error: {path}:")


def test_status_shows_the_tree_and_its_compression(project):
    configure(project, generation={"checkpoint_summary_interval": 2},
              context={"tier3_share": 0.01})
    ticks(project, None, 12, seed=6)
    lines = invoke("status", "-p", "harbour").output.splitlines()
    tree = lines[lines.index(next(l for l in lines if l.startswith("summaries"))):]

    def level(label, ticks):
        return (r"(summaries|         )   " + f"{label:<12}" + r" +\d+ docs?  ticks " + ticks +
                r" +[\d,]+ tokens  compression [\d.]+×")

    assert re.fullmatch(level("checkpoints", "1–12"), tree[0])
    assert re.fullmatch(level("arcs L1", r"1–\d+"), tree[1])
    assert re.fullmatch(level("overall", "1–12"), tree[-2])
    assert re.fullmatch(r"tier 3      [\d,]+ of [\d,]+ tokens: arc_\d+ \(1–\d+\), .*\(\d+–12\)",
                        tree[-1])          # a cut through the tree, never the overall next to it


def test_summarize_one_checkpoint_absorbs_the_ticks_owed_before_it(project):
    configure(project, generation={"checkpoint_summary_interval": 2})
    failing = ScriptedModel().fail("summarizer", ModelError("down")).fail("summarizer",
                                                                          ModelError("down"))
    ticks(project, failing, 3)
    assert project.state()["pending_checkpoints"] == [2]
    out = invoke("summarize", "-p", "harbour", "--checkpoint", "3").output.splitlines()
    assert out[0].startswith("checkpoint_003   ticks 1–3 ")
    assert "pending_checkpoints" not in project.state()
    assert [d.name for d in load_tree(project.summaries_dir).checkpoints()] == ["checkpoint_003"]
    result = invoke("summarize", "-p", "harbour", "--pending", "--rebuild")
    assert result.exit_code == 2 and "give one of --checkpoint T, --pending, --rebuild" in result.output
    result = invoke("summarize", "-p", "harbour", "--checkpoint", "2")
    assert result.output == "Error: tick 2 is inside checkpoint_003 (ticks 1–3)\n"


def test_a_sessions_tree_is_kept_while_no_summary_file_changes(project):
    """The tree a session reads every tick is made again only when a summary file came,
    went or changed (edited in place included), and reads as a tree made afresh."""
    import os
    run_ticks(project, 12)
    cache = DocCache()
    tree = load_tree(project.summaries_dir, cache)
    assert load_tree(project.summaries_dir, cache) is tree
    path = project.summaries_dir / "checkpoint_010.md"
    mtime = path.stat().st_mtime_ns
    with path.open("a", encoding="utf-8") as handle:
        handle.write("The lamp went out.\n")
    os.utime(path, ns=(mtime, mtime))                  # same mtime: the size tells
    again = load_tree(project.summaries_dir, cache)
    assert again is not tree and "The lamp went out." in again.docs["checkpoint_010"].body
    fresh = load_tree(project.summaries_dir)
    assert again.docs == fresh.docs and again.parent == fresh.parent
    assert again.overall == fresh.overall


def test_a_tick_with_no_summary_owed_reads_the_summaries_folder_once(project, monkeypatch):
    """The summary tree a tick began with is the one its summarizer decides on (a tick
    writes no summary): the folder is read once a tick, not again after the commit; a
    tick that makes a checkpoint reads it again to make it."""
    from novel_agent.tick import pipeline
    from novel_agent.tick.stages import summarize
    reads: list[int] = []
    real = pipeline.load_tree
    counted = lambda *a, **k: reads.append(1) or real(*a, **k)  # noqa: E731
    monkeypatch.setattr(pipeline, "load_tree", counted)
    monkeypatch.setattr(summarize, "load_tree", counted)
    ticks(project, None, 3)
    assert len(reads) == 3
    ticks(project, None, 7)                          # tick 10 owes checkpoint 10
    assert len(reads) > 10 and (project.summaries_dir / "checkpoint_010.md").exists()
