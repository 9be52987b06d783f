"""The end of a book with an outline: `novel run` stops at its last beat and says so,
`novel tick` then refuses (exit 6) until the outline is extended, `novel status` says
finished with the counts, and a fleet counts a finished book as done."""

from __future__ import annotations

from dataclasses import replace

from novel_agent.fleet.view import read_state
from novel_agent.story.outline.file import Beat, Chapter, load_outline, save_outline
from novel_agent.story.scenes import load_scenes, scene_ticks
from tests.support.projects import set_llm, short_outline

FINISHED = "the book is finished: 3 chapters, 6 scenes, {words:,} words"
GO_ON = "extend the outline (novel outline edit, or novel outline regen) to go on"


def words_of(project) -> int:
    return sum(s.words for s in load_scenes(project.scenes_dir))


def test_an_outlined_offline_book_ends_at_its_last_beat_and_a_tick_then_refuses(project, cli):
    set_llm(project.root, outline__chapters=3, outline__beats_per_chapter=2,
            outline__scenes_per_chapter=2)
    assert "3 acts, 3 chapters, 6 beats, 6 scenes planned" in cli("outline", "-p", "harbour").output
    run = cli("run", "-p", "harbour", "--ticks", "20")
    scenes = load_scenes(project.scenes_dir)
    assert [s.beat for s in scenes] == ["1.1", "1.2", "2.1", "2.2", "3.1", "3.2"]
    assert all(s.beat_status == "done" for s in scenes)
    finished = FINISHED.format(words=words_of(project))
    assert run.output.splitlines()[-1].startswith(f"{finished}. 6 ticks, ")
    assert "tick failed" not in run.output

    refused = cli("tick", "-p", "harbour", ok=False)
    assert refused.exit_code == 6
    assert refused.output == f"Error: {finished}; {GO_ON}\n"
    assert scene_ticks(project.scenes_dir) == [1, 2, 3, 4, 5, 6]
    status = cli("status", "-p", "harbour").output
    assert f"outline     finished: 3 chapters, 6 scenes, {words_of(project):,} words; {GO_ON}\n" \
        in status
    again = cli("run", "-p", "harbour", "--ticks", "5")             # nothing to write: done
    assert again.output.splitlines()[-1].startswith(f"{finished}; {GO_ON}. 0 ticks, ")

    outline = load_outline(project.outline_file)          # a sequel's chapter, added by hand
    fourth = Chapter(4, "The Return", "Mara goes back to sea.", 2,
                     (Beat("4.1", "Mara sails."), Beat("4.2", "Mara comes home.")))
    last = replace(outline.acts[-1], chapters=outline.acts[-1].chapters + (fourth,))
    save_outline(project.outline_file, replace(outline, acts=outline.acts[:-1] + (last,)))
    went_on = cli("tick", "-p", "harbour", "-n", "5")
    assert scene_ticks(project.scenes_dir) == [1, 2, 3, 4, 5, 6, 7, 8]
    assert went_on.output.splitlines()[-2] == "the book is finished: 4 chapters, 8 scenes, " \
        f"{words_of(project):,} words"
    assert "tick 9 " not in went_on.output


def test_status_says_where_an_unfinished_book_stands(project, cli):
    assert "\noutline " not in cli("status", "-p", "harbour").output     # none: no line
    save_outline(project.outline_file, short_outline(chapters=3, beats=2, scenes=2))
    assert 'outline     act 1 of 3, chapter 1 of 3 "Chapter 1" (scene 1 of 2), beat 1.1; 0 of ' \
           "6 beats done\n" in cli("status", "-p", "harbour").output
    cli("tick", "-p", "harbour", "-n", "3")
    assert 'outline     act 2 of 3, chapter 2 of 3 "Chapter 2" (scene 2 of 2), beat 2.2; 3 of ' \
           "6 beats done\n" in cli("status", "-p", "harbour").output


def test_a_fleet_counts_a_finished_book_as_done(projects_dir, project, cli):
    save_outline(project.outline_file, short_outline(chapters=2, beats=1, scenes=1))
    run = cli("fleet", "run", "--ticks", "10")
    assert scene_ticks(project.scenes_dir) == [1, 2]
    words = words_of(project)
    (row,) = read_state(projects_dir).books
    assert (row.state, row.reason) == ("done", f"the book is finished: 2 chapters, 2 scenes, "
                                                f"{words:,} words")
    assert "parked" not in run.output and "tick failed" not in run.output
    again = cli("fleet", "run", "--ticks", "10")
    (row,) = read_state(projects_dir).books
    assert row.state == "done" and row.reason.startswith("the book is finished: 2 chapters")
    assert "0 ticks" in again.output.splitlines()[-1]
