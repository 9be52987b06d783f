"""A full `novel tick` through the real openai SDK against a local OpenAI-compatible server."""

from __future__ import annotations

from novel_agent.story.memory.read import load_memory
from novel_agent.story.scenes import load_scene
from tests.support.clirunner import invoke
from tests.support.fake_openai import API_KEY as KEY
from tests.support.fake_openai import FakeOpenAIServer
from tests.support.responders import PROSE, stage_of, story_responder


def tick(server, *extra):
    return invoke("tick", "-p", "harbour", "--base-url", server.base_url,
                  "--model", "gpt-4o-mini", *extra)


def test_tick_through_the_sdk(openai_project):
    with FakeOpenAIServer(story_responder) as server:
        result = tick(server)
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"model: openai model gpt-4o-mini at {server.base_url}")
    chats = [r for r in server.requests if r["path"].endswith("/chat/completions")]
    stages = [stage_of(r["json"]) for r in chats]
    assert stages == ["planner", "writer", "extractor"]
    plan_req, write_req, extract_req = (r["json"] for r in chats)
    # what each stage's prompt must contain
    assert "A lighthouse keeper finds a drowned man's map." in plan_req["messages"][-1]["content"]
    assert plan_req["response_format"]["type"] == "json_schema"
    assert plan_req["response_format"]["json_schema"]["schema"]["required"][:2] == [
        "title", "intention"]
    assert plan_req["model"] == "gpt-4o-mini"
    writer_prompt = write_req["messages"][-1]["content"]
    assert "Mara studies the map and finds a door." in writer_prompt
    assert "Opened loop [" not in writer_prompt      # no tool notes for the writer to copy
    assert "response_format" not in write_req
    assert PROSE in extract_req["messages"][-1]["content"]
    assert chats[0]["headers"]["authorization"] == f"Bearer {KEY}"
    # what landed on disk
    scene = load_scene(openai_project / "scenes" / "scene_001.md")
    assert scene.body == PROSE and scene.title == "The Drawn Door"
    assert scene.summary[1] == "She finds a door drawn on it."
    memory = load_memory(openai_project / "memory")
    assert memory.find_character("The Stranger")["description"] == "drowned, carried the map"
    assert memory.find_character("Mara Quill")["state"] == "unsettled"
    assert memory.open_loops()[0]["description"] == "what lies behind the drawn door"
    assert memory.facts == [{"text": "The map shows a door Mara has never seen", "scene": 1}]
    for path in openai_project.rglob("*"):
        if path.is_file():
            assert KEY not in path.read_text(errors="replace")


def test_server_that_rejects_json_schema_falls_back(openai_project):
    with FakeOpenAIServer(story_responder, reject_json_schema=True) as server:
        result = tick(server)
    assert result.exit_code == 0, result.output
    formats = [(r["json"].get("response_format") or {}).get("type")
               for r in server.requests if r["path"].endswith("/chat/completions")]
    # planner: schema refused, then json_object; writer: prose; extractor: json_object at once
    assert formats == ["json_schema", "json_object", None, "json_object"]
    assert (openai_project / "scenes" / "scene_001.md").is_file()


def test_server_error_fails_the_tick_and_changes_nothing(openai_project, snapshot):
    before = snapshot(openai_project)
    with FakeOpenAIServer(story_responder, fail_first=[500] * 10) as server:
        result = invoke("tick", "-p", "harbour", "--base-url",
                        server.base_url, env={"NOVEL_LLM_MAX_RETRIES": "1"})
    assert result.exit_code == 1
    assert "failed in planner" in result.output and "HTTP 500" in result.output
    assert KEY not in result.output
    assert snapshot(openai_project) == before


def test_a_tick_whose_scene_was_only_copies_is_written_again(openai_project):
    """A small model writes scene 1 again for scene 2, and again when asked not to: the
    tick fails, nothing lands, and `novel tick` runs it once more instead of stopping
    (the demo, a new user's first command, ended there)."""
    writes = []

    def responder(body):
        if stage_of(body) == "writer" and "Write scene 2 now" in body["messages"][-1]["content"]:
            writes.append(1)
            return PROSE if len(writes) <= 2 else f"{PROSE} The bell rang twice."
        return story_responder(body)
    with FakeOpenAIServer(responder) as server:
        result = tick(server, "-n", "2")
    assert result.exit_code == 0, result.output
    assert "tick 2 failed in writer: writer: the answer is mostly scaffolding or copies" in \
        result.output and "nothing was committed: writing it again" in result.output
    assert len(writes) == 3
    scene = load_scene(openai_project / "scenes" / "scene_002.md")
    assert "The bell rang twice." in scene.body
