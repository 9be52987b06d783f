"""A revise that makes someone dead lists the later scenes where they act or speak
(issue 50, item 10: in its run a revise killed a man in scene 10 and said nothing of
scenes 11, 12, 17, 20, 21 and 25, where he still acted). A book of our own, read by the
reading model (tests/support/reading_model.py): Ydris Brannock comes in at scene 2, acts
in scenes 4, 6 and 9 and is only remembered in scene 7; the author's new scene 3 has
him drown."""

from __future__ import annotations

from novel_agent.cli.revise_cmd import report
from novel_agent.history.hooks import opened
from novel_agent.revision.revise import revise
from novel_agent.story.project.recovery import reconciled
from novel_agent.story.scenes import load_scene
from novel_agent.tick.pipeline import tick
from novel_agent.tick.session import Session
from tests.support.reading_model import ReadingModel
from tests.support.ticking import NOW

EVENTS = {
    2: ["Ydris Brannock came in from the rain.", "Petra Holm came in from the rain."],
    4: ["Ydris Brannock picked up the brass key."],
    6: ["Ydris Brannock and Petra Holm became rivals."],
    7: ["Petra Holm remembered Ydris Brannock by the fire."],
    9: ["Ydris Brannock gave the brass key to Petra Holm."],
}
LAST = 10


def session(project):
    return Session.open(project, project.config(), now=lambda: NOW,
                        make_model=lambda: ReadingModel(seed=0, events=EVENTS))


def test_a_revise_that_kills_lists_the_later_scenes_where_the_dead_still_act(project, capsys):
    with reconciled(project), session(project) as s:
        while project.tick() < LAST:
            tick(s)
    body = "Ydris Brannock died at the weir.\n\n" + load_scene(project.scene_path(3)).body
    with opened(project), session(project) as s:
        result = revise(s, 3, body)
    report(result, 3)                  # as novel revise prints it
    out = capsys.readouterr().out
    assert "  now:       Ydris Brannock is dead" in out
    checks = [line for line in out.splitlines() if "acts or speaks" in line]
    listed = [int(line.split("scene ")[1].split(":")[0]) for line in checks]
    # 4, 6, 9: his events; 5: the planner put him in its cast and its prose; not 7, where
    # he is only remembered
    assert listed == [4, 5, 6, 9], out
    assert "Ydris Brannock" in load_scene(project.scene_path(5)).characters
    assert "  check: scene 4: Ydris Brannock acts or speaks, dead since scene 3: " \
           "“Ydris Brannock picked up the brass key.”" in checks
    assert [a.tick for a in result.acting] == listed
