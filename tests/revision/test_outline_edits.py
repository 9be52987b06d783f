"""An edit of the outline's arc (revision/outline_edits.py, the Outline page's form) keeps
the premise's question the arc holds (issue 51: the question is kept whole beside the
ending)."""

from __future__ import annotations

from dataclasses import replace

from novel_agent.revision.outline_edits import edit_part
from novel_agent.story.outline.file import load_outline, save_outline
from tests.support.projects import short_outline


def test_an_edit_of_the_arc_keeps_its_question(project):
    outline = short_outline(chapters=2, beats=1, scenes=1)
    save_outline(project.outline_file, replace(outline, arc=replace(
        outline.arc, question="What do the glass apples hold?")))
    edited = edit_part(project, "arc", {"summary": "Ines finds the apples and what they hold.",
                                        "ending": "Ines frees the villagers, her own memory too."})
    assert edited is not None and load_outline(project.outline_file).arc == edited.arc
    assert edited.arc.question == "What do the glass apples hold?"
    assert edited.arc.ending == "Ines frees the villagers, her own memory too."
