"""A project's templates are rendered with sample data of the real shapes before the first
model call: an error that shows only with data fails the tick with no call paid for."""

from __future__ import annotations

import pytest

from novel_agent.context.prompts import SAMPLE_VALUES, check_templates, render_stage, sample_context
from novel_agent.errors import ConfigError
from novel_agent.paths import TEMPLATES_DIR
from tests.support.clirunner import invoke
from tests.support.fake_openai import FakeOpenAIServer
from tests.support.responders import story_responder
from tests.support.scripted import ScriptedModel
from tests.support.ticking import run_ticks

WRITE = (TEMPLATES_DIR / "write.j2").read_text()
BROKEN = [
    ("{{ sections[99].text }}", "template error: list object has no element 99"),
    ("{{ scene_title | upper }}", "template error: 'scene_title' is undefined"),
    ("{{ max_words + title }}", "template error: unsupported operand type(s) for +: 'int' "
                                "and 'str'"),
]


@pytest.mark.parametrize("line,message", BROKEN, ids=["index", "filter", "type"])
def test_a_write_template_broken_by_data_fails_the_tick_before_any_call(project, snapshot,
                                                                         line, message):
    project.templates_dir.mkdir()
    (project.templates_dir / "write.j2").write_text(WRITE + "\n" + line + "\n")
    before = snapshot(project.root)
    model = ScriptedModel()           # nothing queued: a call would fail loudly
    with pytest.raises(ConfigError) as info:
        run_ticks(project, 1, model)
    line = len(WRITE.splitlines()) + 2          # the line added, named
    assert (info.value.file, info.value.line) == (str(project.templates_dir / "write.j2"), line)
    assert str(info.value).startswith(f"{project.templates_dir / 'write.j2'}:{line}: {message}")
    assert model.requests == [] and snapshot(project.root) == before


def test_through_a_server_not_one_request_is_made(openai_project):
    (openai_project / "templates").mkdir()
    (openai_project / "templates" / "write.j2").write_text(WRITE + "\n{{ sections[99].text }}\n")
    with FakeOpenAIServer(story_responder) as server:
        result = invoke("tick", "-p", "harbour", "--base-url",
                        server.base_url, "--model", "gpt-4o-mini")
    assert result.exit_code == 1
    line = len(WRITE.splitlines()) + 2
    assert result.output.splitlines()[-1] == (
        f"Error: {openai_project / 'templates' / 'write.j2'}:{line}: template error: list "
        "object has no element 99; fix the template")
    assert [r for r in server.requests if r["path"].endswith("/chat/completions")] == []
    assert not (openai_project / "scenes" / "scene_001.md").exists()


def test_a_template_that_uses_the_data_it_is_given_passes_and_ticks(project):
    project.templates_dir.mkdir()
    (project.templates_dir / "write.j2").write_text(
        WRITE + "\n{{ sections[0].title }} / {{ context.text('intention')[:20] }}"
                "{% if title %} ({{ title | upper }}){% endif %}\n")
    check_templates(project.templates_dir)
    (result,) = run_ticks(project, 1)
    assert result.scene_path.is_file()


@pytest.mark.parametrize("stage", sorted(SAMPLE_VALUES))
def test_the_shipped_templates_render_every_sample(stage):
    for values in SAMPLE_VALUES[stage]:
        messages = render_stage(sample_context(stage, values))
        assert messages[-1]["role"] == "user" and "Mara Quill" in messages[-1]["content"]


def test_a_planner_template_that_needs_its_sections_still_ticks(project):
    """The planner compares its intention with its template's own words, rendered without
    the sections: a project's template that cannot render so just gives none."""
    project.templates_dir.mkdir()
    shipped = (TEMPLATES_DIR / "plan.j2").read_text()
    (project.templates_dir / "plan.j2").write_text(shipped + "\n{{ sections[0].title }}\n")
    (result,) = run_ticks(project, 1)
    assert result.scene_path.is_file()


@pytest.mark.parametrize("values", SAMPLE_VALUES["planner"])
def test_the_planners_answer_keys_are_each_on_a_line_of_their_own(values):
    # an {% endif %} ending a line ate its newline: '- "pov": the name of the
    # point-of-view character- "location": …' in every planner prompt
    system = render_stage(sample_context("planner", values))[0]["content"]
    keys = [line.split('"')[1] for line in system.splitlines() if line.startswith('- "')]
    assert keys[:6] == ["title", "intention", "pov", "location", "characters", "tool_calls"]
    assert ('(never one marked dead or absent)' in system) == values["anyone_gone"]
