"""A planted manuscript (vintage.md: 18 scenes of a 1935 vineyard mystery) imported through
a careful reading model (tests/support/manuscript_reader.py), then `novel audit`: the POV
right in every scene, every planted contradiction found, and nothing else, though the
book is full of near misses.

What is planted, scene by scene (the kind the audit should report):

     2  weekday         "The next day, Thursday" the day after Monday 14 October
     7  pov_knowledge   Dunmore knows where the ledger is hidden; only Lotte and Aubrey saw
     8  repetition      the valley paragraph of scene 6 again
    10  two_places      Pike at the Station at 21:00, where scene 9 has him at the Press House
    10  loop_overdue    "who opened the sluice gate" (scene 3) untouched for 7 scenes
    11  season          harvest heat the day after the snow of scene 9
    11  appearance      Lotte's brown eyes (green in scene 2)
    13  no_travel       "Ten minutes later" Dunmore is in the Long Cellar, eight miles from
                        the Station of scene 12
    14  dead_or_absent  the drowned Tomas Reyne speaks
    14  lost_item       Clara unlocks the office with the brass key she dropped in the race
    15  repeated_title  "The Long Cellar" again (scene 13)
    16  nomenclature    "Ida Fenwick" for Ida Fennick
    16  voice           Aubrey says Pike's "right as ninepence"
    17  clock           "Wednesday 16 October" after Monday 21 October

and the near misses (CONTROLS below), none of which is a contradiction.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from novel_agent.audit.findings import RULES
from novel_agent.books.importer import import_manuscript
from novel_agent.books.split import load_manuscript
from novel_agent.story.project.folder import create_project
from novel_agent.story.project.recovery import reconciled
from novel_agent.story.scenes import load_scenes
from novel_agent.tick.session import Session
from tests.support.clirunner import invoke
from tests.support.manuscript_reader import ManuscriptReader

MANUSCRIPT = Path(__file__).with_name("vintage.md")
POVS = ["Clara Marsh", "Lotte Brandt", "Lotte Brandt", "Clara Marsh", "Hugh Dunmore",
        "Clara Marsh", "Hugh Dunmore", "Samuel Pike", "Clara Marsh", "Hugh Dunmore",
        "Lotte Brandt", "Hugh Dunmore", "Hugh Dunmore", "Clara Marsh", "Lotte Brandt",
        "Clara Marsh", "Ida Fennick", "Clara Marsh"]
PLANTED = {(2, "weekday"), (7, "pov_knowledge"), (8, "repetition"), (10, "two_places"),
           (10, "loop_overdue"), (11, "season"), (11, "appearance"), (13, "no_travel"),
           (14, "dead_or_absent"), (14, "lost_item"), (15, "repeated_title"),
           (16, "nomenclature"), (16, "voice"), (17, "clock")}
# The near misses: (scene, the kind a careless audit would report there, what it is).
CONTROLS = [
    (4, "weekday", "Wednesday 16 October, right by the count from Monday 14"),
    (5, "appearance", "Aubrey's grey-blue eyes, grey in scene 1"),
    (6, "dead_or_absent", "Tomas Reyne's remembered words"),
    (6, "clock", "a remembered Sunday 13 October, before the clock"),
    (6, "pov_knowledge", "Clara knows where the ledger is: Lotte told her"),
    (8, "no_travel", "Pike at the Station the morning after the Weighing Shed, no clock"),
    (9, "no_travel", "Pike at the Press House, the time since scene 8 not told"),
    (9, "voice", "Pike says his own \"right as ninepence\""),
    (15, "dead_or_absent", "Lotte dreams of Tomas Reyne"),
    (15, "season", "the snow of a dream"),
    (15, "lost_item", "Aubrey takes the lamp back from Lotte before he uses it"),
    (17, "nomenclature", "Paul Fennick, Ida's brother-in-law: a new person of her name"),
    (18, "season", "summer eight months after the snow"),
    (18, "weekday", "Saturday 20 June 1936, right by the count from Monday 14 October 1935"),
    (18, "clock", "June 1936 after October: a year on"),
    (18, "dead_or_absent", "Tomas Reyne remembered"),
]


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    """The manuscript imported into a fresh project (the reading model), and `novel audit
    --json` of it."""
    root = tmp_path_factory.mktemp("projects")
    with pytest.MonkeyPatch.context() as env:
        env.chdir(root)
        env.setenv("NOVEL_PROJECTS_DIR", str(root))
        for var in [v for v in os.environ if v.startswith("NOVEL_") and v != "NOVEL_PROJECTS_DIR"]:
            env.delenv(var)
        return _import_and_audit(root)


def _import_and_audit(root: Path):
    project = create_project(root / "vintage", {
        "name": "vintage", "premise": "A bookkeeper, a ledger and a drowned cellar master "
                                      "during the grape harvest of 1935."},
        config={"llm": {"provider": "offline"}, "audit": {"loop_overdue": 6}})
    manuscript = load_manuscript(MANUSCRIPT, "auto", 400)
    with reconciled(project), Session.open(project, project.config(),
                                           make_model=lambda: ManuscriptReader()) as session:
        import_manuscript(session, manuscript)
    audited = invoke("audit", "-p", str(project.root), "--json")
    assert audited.exit_code == 0, audited.output
    return project, manuscript, json.loads(audited.output)


def test_the_manuscript_plants_every_kind_the_audit_knows():
    assert {kind for _, kind in PLANTED} == set(RULES)
    assert {kind for _, kind, _ in CONTROLS} <= set(RULES)
    assert not PLANTED & {(scene, kind) for scene, kind, _ in CONTROLS}


def test_the_pov_is_right_in_every_scene(imported):
    project, _, _ = imported
    scenes = load_scenes(project.scenes_dir)
    assert [s.pov for s in scenes] == POVS
    # the drowned man is named most in the scene that finds him, and never its POV
    assert scenes[3].characters[:2] == ["Clara Marsh", "Tomas Reyne"]


def test_every_planted_contradiction_is_found_and_nothing_else(imported):
    _, _, audit = imported
    found = {(f["scene"], f["kind"]) for f in audit["findings"]}
    assert found == PLANTED
    assert len(audit["findings"]) == len(PLANTED)


@pytest.mark.parametrize("scene, kind, what", CONTROLS, ids=[c[2] for c in CONTROLS])
def test_a_near_miss_is_no_finding(imported, scene, kind, what):
    _, _, audit = imported
    assert not [f for f in audit["findings"] if (f["scene"], f["kind"]) == (scene, kind)]


def test_each_finding_quotes_its_scene_and_what_it_contradicts(imported):
    _, manuscript, audit = imported
    bodies = [" ".join(p.body.split()) for p in manuscript.pieces]
    titles = [p.title for p in manuscript.pieces]
    for f in audit["findings"]:
        mine = bodies[f["scene"] - 1] + titles[f["scene"] - 1]
        assert f["quote"].rstrip(" …") in mine or f["quote"] in mine, f
        if f["kind"] in ("weekday", "season", "repetition", "repeated_title"):
            theirs = bodies[f["against_scene"] - 1] + titles[f["against_scene"] - 1]
            assert f["against"].rstrip(" …") in theirs, f
    by_kind = {f["kind"]: f for f in audit["findings"]}
    assert by_kind["weekday"]["subtype"] == "absolute time"
    assert by_kind["weekday"]["against_scene"] == 1
    assert by_kind["weekday"]["quote"].startswith("The next day, Thursday")
    assert by_kind["season"]["subtype"] == "duration"
    assert by_kind["season"]["against"].startswith("Snow had fallen")
    assert by_kind["no_travel"]["message"] == ("Hugh Dunmore is at the Long Cellar 10 minutes "
                                               "after the Station, with no travel")
    assert by_kind["dead_or_absent"]["severity"] == "critical"
