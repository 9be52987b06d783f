"""The one call loop (models/served.py) under the one policy (models/retry.py), the same on
every served provider: the openai SDK against FakeOpenAIServer, the anthropic SDK against
FakeAnthropicServer, and an llm plugin's model (tests/support/llm_home.py). Sleeps are
recorded, never slept."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import pytest

from novel_agent.errors import ModelError
from novel_agent.models.anthropic_model import AnthropicModel
from novel_agent.models.base import Request
from novel_agent.models.llm_model import LlmModel
from novel_agent.models.openai_compat import OpenAICompatModel
from novel_agent.models.retry import RETRY_AFTER_MAX, call_delay, rest, retry_after
from tests.support.fake_anthropic import FakeAnthropicServer
from tests.support.fake_openai import FakeOpenAIServer
from tests.support.llm_home import Scripted, plugged

KEY = "sk-policy-SECRET-77"
RETRIED = (408, 409, 429, 500, 502, 503, 529)
FINAL = (400, 401, 403, 404, 422)


class PluginError(Exception):
    """An llm plugin's HTTP error: a status, and a response with its headers."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status_code = status
        self.response = SimpleNamespace(status_code=status, headers=headers or {})


@dataclass
class Served:
    """One provider's model under test, and what its server (or plugin) was asked."""

    model: Any
    slept: list[float]
    requests: Callable[[], int]


Answers = list[dict[str, Any]]     # what the first requests get: status, error, headers, delay


def _scripted(answers: Answers) -> Callable[[dict[str, Any]], Any]:
    queue = list(answers)

    def responder(body: dict[str, Any]) -> Any:
        return queue.pop(0) if queue else "The rain began."
    return responder


@contextmanager
def openai_model(answers: Answers, **options: Any) -> Iterator[Served]:
    with FakeOpenAIServer(_scripted(answers)) as server:
        slept: list[float] = []
        model = OpenAICompatModel(server.base_url, "gpt-test", KEY, options.pop("timeout", 5.0),
                                  options.pop("max_retries", 3), 0.5, sleep=slept.append,
                                  **options)
        yield Served(model, slept, lambda: len(server.requests))


@contextmanager
def anthropic_model(answers: Answers, **options: Any) -> Iterator[Served]:
    with FakeAnthropicServer(_scripted(answers)) as server:
        slept: list[float] = []
        model = AnthropicModel("claude-test", KEY, base_url=server.base_url,
                               timeout=options.pop("timeout", 5.0),
                               max_retries=options.pop("max_retries", 3), sleep=slept.append,
                               **options)
        yield Served(model, slept, lambda: len(server.requests))


@contextmanager
def llm_model(answers: Answers, **options: Any) -> Iterator[Served]:
    failures = tuple(PluginError(a["status"], a.get("error", "error"), a.get("headers"))
                     for a in answers if "status" in a)
    stall = max((a.get("delay", 0.0) for a in answers), default=0.0)
    plugin = Scripted("llm-test", lambda body: "The rain began.", failures=failures,
                      stall=stall)
    with plugged(plugin):
        slept: list[float] = []
        model = LlmModel(plugin, KEY, timeout=options.pop("timeout", 5.0),
                         max_retries=options.pop("max_retries", 3), sleep=slept.append,
                         **options)
        yield Served(model, slept, lambda: len(plugin.prompts))


PROVIDERS = {"openai": (openai_model, "openai model gpt-test"),
             "anthropic": (anthropic_model, "anthropic model claude-test"),
             "llm": (llm_model, "llm model llm-test")}
each_provider = pytest.mark.parametrize("provider", list(PROVIDERS))


def ask() -> Request:
    return Request("writer", [{"role": "user", "content": "Write."}], 50)


def failing(status: int, times: int = 1, **headers: str) -> Answers:
    said = {name.replace("_", "-"): value for name, value in headers.items()}
    return [{"status": status, "error": f"refused {status}", "headers": said}] * times


@each_provider
@pytest.mark.parametrize("status", RETRIED)
def test_the_same_statuses_are_retried_on_every_provider(provider, status):
    make, _ = PROVIDERS[provider]
    with make(failing(status)) as served:
        completion = served.model.complete(ask())
        assert served.requests() == 2
    assert completion.text == "The rain began." and completion.attempts == 2
    assert served.slept == [0.5]


@each_provider
@pytest.mark.parametrize("status", FINAL)
def test_a_refusal_is_not_retried_and_its_line_has_one_shape(provider, status):
    make, where = PROVIDERS[provider]
    with make(failing(status)) as served:
        with pytest.raises(ModelError) as caught:
            served.model.complete(ask())
        assert served.requests() == 1
    error = caught.value
    assert str(error).startswith(f"writer: {where} failed: HTTP {status}: refused {status}")
    assert (error.status, error.attempts, served.slept) == (status, 1, [])
    assert error.__cause__ is None and error.__suppress_context__


@each_provider
def test_retries_run_out_into_one_line_counting_the_attempts(provider):
    make, where = PROVIDERS[provider]
    with make(failing(503, 5), max_retries=2) as served:
        with pytest.raises(ModelError) as caught:
            served.model.complete(ask())
        assert served.requests() == 3
    assert str(caught.value) == f"writer: {where} failed: HTTP 503: refused 503 (after 3 attempts)"
    assert caught.value.attempts == 3 and served.slept == [0.5, 1.0]


@each_provider
def test_retry_after_is_honoured_in_full(provider):
    # 45 s: above the 20 s that the backoff grows to, which once capped it too
    make, _ = PROVIDERS[provider]
    answers = failing(429, retry_after="45") + failing(503, retry_after_ms="1500")
    with make(answers) as served:
        assert served.model.complete(ask()).attempts == 3
    assert served.slept == [45.0, 1.5]


@each_provider
def test_a_server_asking_for_longer_than_a_call_waits_is_not_retried(provider):
    make, where = PROVIDERS[provider]
    with make(failing(429, retry_after="3600")) as served:
        with pytest.raises(ModelError) as caught:
            served.model.complete(ask())
    assert str(caught.value) == (
        f"writer: {where} failed: HTTP 429: refused 429 (the server asked to wait 3600s, "
        f"more than the {RETRY_AFTER_MAX:g}s a call waits)")
    assert served.slept == [] and caught.value.attempts == 1


@each_provider
def test_a_timeout_is_retried_on_every_served_provider(provider):
    make, where = PROVIDERS[provider]
    with make([{"content": "Too late.", "delay": 2.0}] * 2, timeout=0.3, max_retries=1,
              stream=False) as served:
        with pytest.raises(ModelError) as caught:
            served.model.complete(ask())
        assert served.requests() == 2
    assert str(caught.value) == f"writer: {where} timed out after 0.3s (after 2 attempts)"
    assert caught.value.attempts == 2 and served.slept == [0.5] and caught.value.status is None


def test_a_provider_that_says_a_timeout_is_not_worth_retrying_is_not_retried():
    """The embedded model (LocalModel) builds its client with retry_timeouts=False."""
    with openai_model([{"content": "Too late.", "delay": 2.0}] * 2, timeout=0.3,
                      retry_timeouts=False, label="local") as served:
        with pytest.raises(ModelError) as caught:
            served.model.complete(ask())
        assert served.requests() == 1
    assert str(caught.value) == "writer: local model gpt-test timed out after 0.3s"
    assert served.slept == []


def test_no_key_reaches_an_error_line_of_any_provider():
    for make, _ in PROVIDERS.values():
        with make([{"status": 401, "error": f"bad key {KEY}\nsee the docs"}]) as served:
            with pytest.raises(ModelError) as caught:
                served.model.complete(ask())
        assert KEY not in str(caught.value) and "\n" not in str(caught.value)
        assert "bad key ***" in str(caught.value)


def test_the_policys_waits():
    assert [call_delay(n) for n in range(7)] == [0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 20.0]
    assert call_delay(5, 45.0) == 45.0
    assert retry_after({"Retry-After": "7"}) == 7.0
    assert retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:30 GMT"},
                       wall=lambda: 1445412480.0) == 30.0
    assert retry_after({"retry-after": "soon"}) is None and retry_after(None) is None
    assert [rest(n, 2.0, floor=3.0) for n in (1, 2, 3)] == [3.0, 4.0, 8.0]
    assert rest(30, 5.0) == 600.0
