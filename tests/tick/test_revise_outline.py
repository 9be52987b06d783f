"""The outline revised at checkpoints (tick/stages/revise_outline.py): a scene that closes
a chapter off course brings one "outline" call that rewrites the rest, once per
checkpoint, keeping locked parts and the book's length, as an entry of the history; a
book on course, or with outline.revise off, makes no call; a failed answer leaves the
outline as it was and the scene committed; the author's comments in it are kept."""

from __future__ import annotations

import pytest

from novel_agent.errors import BookFinishedError
from novel_agent.history.store import History
from novel_agent.index.ledger import ledger_path, read_rows
from novel_agent.models.offline import OfflineModel
from novel_agent.story.outline.file import load_outline, save_outline
from novel_agent.story.outline.position import longest
from novel_agent.story.project.recovery import reconciled
from novel_agent.story.scenes import load_scenes
from novel_agent.tick.pipeline import tick
from novel_agent.tick.session import Session
from tests.support.projects import (
    annotate,
    comments_of,
    outline_project,
    set_llm,
    short_outline,
)
from tests.support.scripted import ScriptedModel
from tests.support.stress_model import StressModel
from tests.support.ticking import NOW


def write_book(project, make_model, limit: int = 60):
    """Tick until the book is finished; the results and the outline stage's events."""
    results, events = [], []
    with reconciled(project), Session.open(project, project.config(), make_model=make_model,
                                           now=lambda: NOW) as session:
        for _ in range(limit):
            try:
                results.append(tick(session, on_stage=events.append))
            except BookFinishedError:
                return results, [e for e in events if e.stage == "outline"]
    raise AssertionError(f"the book did not end in {limit} ticks")


def stress():
    return StressModel()


def revisions(project) -> list:
    return [e for e in History(project).entries() if e.kind == "outline"]


def test_a_book_that_drifts_every_chapter_is_revised_once_a_checkpoint_and_still_ends(project):
    outline_project(project, chapters=4, beats=2, scenes=2)
    planned = load_outline(project.outline_file)
    results, events = write_book(project, stress)
    assert len(results) == sum(longest(c) for c in planned.chapters()) == 12
    assert len(results) <= 1.5 * planned.planned_scenes()
    entries = revisions(project)
    assert [(e.tick, e.subject.split(":")[0]) for e in reversed(entries)] == [
        (3, "outline revised at chapter 2"), (6, "outline revised at chapter 3"),
        (9, "outline revised at chapter 4")]               # never at the book's end
    assert all("2 beats missed" in e.subject for e in entries)
    assert [r.notices[-1] for r in results if r.tick in (3, 6, 9)] == \
        [e.subject for e in reversed(entries)]
    assert len(events) == 3 and all(e.calls == 1 for e in events)
    rows = [r for r in read_rows(ledger_path(project)) if r["stage"] == "outline"]
    assert [r["tick"] for r in rows] == [3, 6, 9]
    after = load_outline(project.outline_file)
    assert after != planned and after.chapter(1) == planned.chapter(1)
    assert [c.scenes for c in after.chapters()] == [c.scenes for c in planned.chapters()]
    assert all(b.id in {x.id for x in after.beats()} for b in planned.beats())
    assert after.beats()[-1] == planned.beats()[-1]       # the ending stays where it was


def test_a_revision_keeps_the_authors_comments_in_the_outline(project):
    outline_project(project, chapters=3, beats=2, scenes=2)
    said = annotate(project.outline_file)
    planned = load_outline(project.outline_file)
    write_book(project, stress)
    assert [e.subject.split(":")[0] for e in revisions(project)][-1] == \
        "outline revised at chapter 2"
    assert load_outline(project.outline_file) != planned
    assert comments_of(project.outline_file) == said


def test_a_revision_keeps_locked_parts(project):
    outline = short_outline(chapters=3, beats=2, scenes=2)
    text = project.outline_file
    save_outline(text, outline)
    raw = text.read_text().replace("  - number: 3\n", "  - number: 3\n    locked: true\n")
    text.write_text(raw)
    locked = load_outline(text)
    assert locked.chapter(3).locked
    write_book(project, stress)
    after = load_outline(text)
    assert after.chapter(3) == locked.chapter(3)
    assert after.chapter(2) != locked.chapter(2) and after.chapter(1) == locked.chapter(1)
    assert [e.subject.split(":")[0] for e in revisions(project)] == [
        "outline revised at chapter 2"]           # at chapter 3's checkpoint all is locked


def test_a_book_on_course_and_a_book_with_revise_off_make_no_call(project):
    outline_project(project, chapters=3, beats=2, scenes=2)
    before = load_outline(project.outline_file)
    results, events = write_book(project, lambda: OfflineModel())
    assert [s.beat_status for s in load_scenes(project.scenes_dir)] == ["done"] * 6
    assert events == [] and revisions(project) == []
    assert load_outline(project.outline_file) == before


def test_outline_revise_off_is_read(project):
    outline_project(project, chapters=3, beats=2, scenes=2)
    set_llm(project.root, outline__revise="off")
    before = load_outline(project.outline_file)
    results, events = write_book(project, stress)
    assert len(results) == 9 and events == [] and revisions(project) == []
    assert load_outline(project.outline_file) == before


def test_outline_revise_every_sets_the_checkpoints(project):
    outline_project(project, chapters=4, beats=2, scenes=2)
    set_llm(project.root, outline__revise_every=2)
    write_book(project, stress)
    assert [(e.tick, e.subject.split(":")[0]) for e in revisions(project)] == [
        (6, "outline revised at chapter 3")]
    assert "4 beats missed" in revisions(project)[0].subject


def test_an_unusable_revision_leaves_the_outline_and_the_scene_stands(project):
    outline_project(project, chapters=3, beats=2, scenes=2)
    before = load_outline(project.outline_file)
    model = ScriptedModel().add("outline", "no outline here").add("outline", {"chapters": 5})
    with reconciled(project), Session.open(project, project.config(), make_model=lambda: (
            setattr(model, "otherwise", StressModel()) or model),
            now=lambda: NOW) as session:
        results = [tick(session) for _ in range(4)]
    assert len(model.calls("outline")) == 2               # asked, repaired once, given up
    notice = results[2].notices[-1]
    assert notice.startswith("the outline was not revised at chapter 2: 2 beats missed")
    assert notice.endswith("it stands as it was; the scene is committed (the revision is "
                           "best-effort)")
    assert load_outline(project.outline_file) == before and revisions(project) == []
    assert [s.tick for s in load_scenes(project.scenes_dir)] == [1, 2, 3, 4]
    assert History(project).entries()[0].subject.startswith("tick 4:")


def test_a_tick_killed_in_the_revision_has_its_scene_and_the_next_tick_asks_nothing(project):
    """Interrupted inside the revision's call (a Ctrl-C, or the process dying there): the
    scene that closed the chapter is committed with its entry, the outline is as it was,
    and the checkpoint is past: the next tick makes no outline call."""
    outline_project(project, chapters=3, beats=2, scenes=2)
    before = load_outline(project.outline_file)
    asked = []

    class Interrupted(StressModel):
        def complete(self, request):
            if request.stage == "outline":
                asked.append(request)
                raise KeyboardInterrupt
            return super().complete(request)

    def open_session():
        return Session.open(project, project.config(), now=lambda: NOW,
                            make_model=lambda: Interrupted())
    with reconciled(project), open_session() as session:
        [tick(session) for _ in range(2)]
        with pytest.raises(KeyboardInterrupt):
            tick(session)
    assert [s.tick for s in load_scenes(project.scenes_dir)] == [1, 2, 3]
    assert History(project).entries()[0].subject.startswith("tick 3:")
    assert load_outline(project.outline_file) == before
    with reconciled(project), open_session() as session:
        assert tick(session).tick == 4
    assert len(asked) == 1 and revisions(project) == []


def test_the_revision_s_prompt_tells_what_happened_and_asks_for_the_rest(project):
    outline_project(project, chapters=3, beats=2, scenes=2)
    model = ScriptedModel()
    with reconciled(project), Session.open(project, project.config(), now=lambda: NOW,
                                           make_model=lambda: (setattr(
                                               model, "otherwise", StressModel())
                                               or model)) as session:
        [tick(session) for _ in range(3)]
    [asked] = model.calls("outline")
    prompt = asked.messages[-1]["content"]
    assert "## What happened since the last checkpoint" in prompt
    assert "Chapter 1 closed; the book goes on to chapter 2. What the scenes did:" in prompt
    assert "Beats missed:\n- 1.1 Beat 1 of chapter 1 happens.\n- 1.2 Beat 2 of chapter 1 " \
           "happens." in prompt
    assert "New threads no beat covers:\n- " in prompt
    assert "Revise the rest of the outline: write chapters 2 and 3 anew" in prompt
    assert "- chapter 2 (now \"Chapter 2\"): 2 beats to write" in prompt
    chapters = asked.json_schema["properties"]["chapters"]
    assert (chapters["minItems"], chapters["maxItems"]) == (2, 2)
