"""The llm library as the tests set it up, in its home ($LLM_USER_PATH: an empty folder for
each test, tests/conftest.py): models of llm's own OpenAI plugin served by FakeOpenAIServer
(`serve`, through the extra-openai-models.yaml the plugin reads), keys stored by llm's own
`llm keys set` (`set_key`), and a small in-process llm plugin (`plugged`) for the models
that plugin cannot be: one without schema support, one that holds no conversation, one
that fails or goes silent.

    with FakeOpenAIServer(StoryServer(project)) as server:
        serve(server, "fake-4")          # llm.provider: llm, llm.model: fake-4
        set_key(KEY_NAME, KEY)
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import llm
import yaml
from click.testing import CliRunner

from novel_agent.models.llm_library import load_plugins
from tests.support.fake_openai import FakeOpenAIServer

KEY = "sk-llm-test-NEVER-IN-A-PROJECT-9"   # the key tests store; no project file may hold it
KEY_NAME = "fakellm"                      # the name it is stored under (`llm keys set fakellm`)
PLUGIN = "novel-test-models"


def home() -> Path:
    """llm's folder for this test."""
    return Path(os.environ["LLM_USER_PATH"])


def serve(server: FakeOpenAIServer, model_id: str = "fake-4", *, key_name: str = KEY_NAME,
          schema: bool = True, aliases: tuple[str, ...] = ()) -> None:
    """Make `model_id` a model of llm's OpenAI plugin at `server` (its key stored as
    `key_name`; "" for none), as a user does in extra-openai-models.yaml."""
    path = home() / "extra-openai-models.yaml"
    entries = yaml.safe_load(path.read_text()) if path.exists() else []
    entry: dict[str, Any] = {"model_id": model_id, "model_name": server.model,
                             "api_base": server.base_url, "aliases": list(aliases)}
    if key_name:
        entry["api_key_name"] = key_name
    if schema:
        entry["supports_schema"] = True
    path.write_text(yaml.safe_dump([*entries, entry], sort_keys=False))


def set_key(name: str, value: str) -> None:
    """Store a key as `llm keys set NAME` does: through llm's own command."""
    load_plugins()        # llm's CLI loads the plugins as it is imported: ours first
    from llm.cli import cli
    result = CliRunner().invoke(cli, ["keys", "set", name, "--value", value])
    assert result.exit_code == 0, result.output


def body_of(prompt: llm.Prompt) -> dict[str, Any]:
    """What an OpenAI-compatible server would be sent for `prompt`: its messages as text."""
    messages = [{"role": m.role, "content": "".join(getattr(p, "text", "") for p in m.parts)}
                for m in prompt.messages]
    return {"messages": messages, "max_tokens": getattr(prompt.options, "max_tokens", None)}


class Scripted(llm.Model):
    """An llm model answering `responder(body)` (a str, or a dict of content and
    finish_reason: as FakeOpenAIServer's responders answer; StoryServer among them), in
    pieces of five characters. `usage(body, text)` gives what it reports (None: nothing);
    `failures` are raised by the first calls, one each; `stall` seconds of silence before
    the answer (cut short when `released` is set). `prompts` keeps each call's Prompt."""

    can_stream = True

    class Options(llm.Options):
        max_tokens: int | None = None
        temperature: float | None = None

    def __init__(self, model_id: str, responder: Callable[[dict], Any], *,
                 schema: bool = False, conversation: bool = True,
                 usage: Callable[[dict, str], dict | None] | None = None,
                 failures: tuple[BaseException, ...] = (), stall: float = 0.0):
        self.model_id, self.responder = model_id, responder
        self.supports_schema, self.supports_conversation = schema, conversation
        self.usage = usage
        self.failures, self.stall = list(failures), stall
        self.released = threading.Event()
        self.prompts: list[llm.Prompt] = []

    def execute(self, prompt: llm.Prompt, stream: bool, response: llm.Response,
                conversation: Any) -> Iterator[str]:
        self.prompts.append(prompt)
        if self.stall:
            self.released.wait(self.stall)
        if self.failures:
            raise self.failures.pop(0)
        body = body_of(prompt)
        answer = self.responder(body)
        answer = {"content": answer} if isinstance(answer, str) else dict(answer)
        text = str(answer["content"])
        yield from (text[i:i + 5] for i in range(0, len(text), 5))
        response.response_json = {"finish_reason": answer.get("finish_reason", "stop")}
        reported = self.usage(body, text) if self.usage else None
        if reported is not None:
            response.set_usage(**reported)


class _Plugin:
    """An llm plugin registering the given models."""

    def __init__(self, models: tuple[llm.Model, ...]):
        self.models = models

    @llm.hookimpl
    def register_models(self, register: Callable[..., None]) -> None:
        for model in self.models:
            register(model)


@contextmanager
def plugged(*models: llm.Model) -> Iterator[None]:
    """`models` offered by an llm plugin registered in this process while the block runs."""
    load_plugins()
    llm.plugins.pm.register(_Plugin(models), name=PLUGIN)
    try:
        yield
    finally:
        llm.plugins.pm.unregister(name=PLUGIN)
        for model in models:
            if isinstance(model, Scripted):
                model.released.set()
