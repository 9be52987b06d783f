"""`novel audit`: the book replayed, findings by subtype with quotes, its CED; and the
planted book: every plant found, no control reported, the replay the same as the ticks."""

from __future__ import annotations

import json

from novel_agent.models.offline import OfflineModel
from novel_agent.story.project.recovery import reconciled
from novel_agent.tick.pipeline import tick
from novel_agent.tick.session import Session
from novel_agent.tick.stages.audit import audit_project
from tests.support.audit_book import BookModel, book, score
from tests.support.audit_cases import BAD, DIES, PLAN1, PLAN2, PROSE1, extraction
from tests.support.scripted import ScriptedModel
from tests.support.ticking import NOW, run_ticks


def three_scenes(project):
    again = {**PLAN2, "title": "The Weir"}
    model = (ScriptedModel().add("planner", PLAN1).add("writer", PROSE1).add("extractor", DIES)
             .add("planner", PLAN2).add("writer", BAD)
             .add("extractor", extraction(["Mara Quill", "Tobin Keel"]))
             .add("planner", again).add("writer", "Mara walked home along the weir. " * 4)
             .add("extractor", extraction(["Mara Quill"])))
    results = run_ticks(project, 3, model, offline_seed=0)
    # the tick renames a title the planner repeats (plan.distinct_title); the author's
    # hand edit brings it back, and the audit of the book finds it
    assert results[2].title != "The Weir" and any("earlier scene's" in w for w in results[2].warnings)
    path = project.scene_path(3)
    path.write_text(path.read_text().replace(f"title: {results[2].title}", "title: The Weir", 1))
    return results


def test_novel_audit_prints_findings_by_subtype_and_the_ced(project, cli):
    three_scenes(project)
    out = cli("audit", "-p", "harbour").output
    words = sum(len(project.scene_path(t).read_text().split("---", 2)[2].split())
                for t in (1, 2, 3))
    assert out == (
        f"audit of harbour: scenes 1–3, {words:,} words, rule checks\n"
        "style (narrative style): 1\n"
        "  scene 3 [minor] the title of scene 1 again\n"
        "    \"The Weir\"\n"
        "    vs \"The Weir\" (scene 1)\n"
        "causal logic (timeline and plot): 1\n"
        "  scene 2 [critical] Tobin Keel acts or speaks, dead since scene 1\n"
        "    \"Tobin laughed and poured the tea for Mara.\"\n"
        "    vs \"Tobin Keel is dead: drowned at the weir\" (scene 1)\n"
        f"findings: 2 in 2 subtypes; CED {2 / (words / 10_000):.3f} (2 / "
        f"{words / 10_000:.2f} × 10,000 words)\n")


def test_novel_audit_range_and_json(project, cli):
    three_scenes(project)
    data = json.loads(cli("audit", "-p", "harbour", "--range", "3-3", "--json").output)
    assert (data["first"], data["last"], data["subtypes"]) == (3, 3, 1)
    assert data["by_kind"] == {"repeated_title": 1}
    assert data["findings"][0]["quote"] == "The Weir"
    assert data["ced"] == round(1 / (data["words"] / 10_000), 3)
    bad = cli("audit", "-p", "harbour", "--range", "2-9", ok=False)
    assert "outside the scenes (1–3)" in bad.output


def test_novel_audit_of_a_book_without_scenes_says_so(project, cli):
    assert "harbour has no scenes to audit" in cli("audit", "-p", "harbour", ok=False).output


def test_the_planted_book_every_plant_found_no_control_reported(project):
    planted = book(36)
    with reconciled(project), Session.open(project, project.config(), now=lambda: NOW, make_model=lambda:
                               BookModel(planted.specs, OfflineModel(seed=0))) as session:
        results = [tick(session) for _ in planted.specs]
    found = {(r.tick, f.kind) for r in results for f in r.findings}
    # a repeated title never lands: the tick renames it (plan.distinct_title) and says so
    titles = {t for t, kind in planted.planted if kind == "repeated_title"}
    renamed = {r.tick for r in results if any("earlier scene's" in w for w in r.warnings)}
    assert titles and titles <= renamed
    expected = {p for p in planted.planted if p[1] != "repeated_title"}
    assert found == expected                   # 8 episodes and one overdue loop in 36 scenes
    assert not found & planted.controls and len(planted.controls) == 10
    assert all(row[3] == 1.0 and row[4] == 1.0 for row in score(found, expected).values())
    replay = audit_project(project, project.config())
    assert {(f.scene, f.kind) for f in replay.findings} == found


def test_novel_audit_after_an_import(project, cli, tmp_path):
    from tests.support.manuscripts import write_book

    book = write_book(tmp_path / "book.md", chapters=2, scenes=2)
    assert "imported 4 scenes" in cli("import", str(book), "-p", "harbour").output
    out = cli("audit", "-p", "harbour", "--json").output
    data = json.loads(out)
    assert (data["first"], data["last"]) == (1, 4) and data["words"] > 400
    assert data["ced"] == round(data["subtypes"] / (data["words"] / 10_000), 3)
