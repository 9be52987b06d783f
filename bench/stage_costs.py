"""What a book costs with one model, and with the "cheap helpers" recipe, at list prices.

    .venv/bin/python -m bench.stage_costs                   # 100 ticks each, OpenAI and Anthropic
    .venv/bin/python -m bench.stage_costs --ticks 30 --providers anthropic

Each provider's book is ticked twice through its test servers on 127.0.0.1 (the real
SDKs, answers like the offline model's from tests/support/story_server.py): once with
one strong model for every stage, once with the recipe of docs/guides/models.md (the
planner and the writer on the strong model, the extractor and the summarizer on a
small one, each model a server of its own). The answers are the same in both, so the
tokens are too; the dollars are the ledger's, at configs/models.yaml's list prices.

Prints, for each run, the dollars per 100 ticks and each stage's share of them, and
the recipe's dollars as a ratio of the one model's. Both servers count a token a word
and cache a prompt's prefix as their API does: OpenAI's automatically (a prefix of
1,024 tokens or more, in steps of 128, seen before), Anthropic's up to the
`cache_control` breakpoints novel_agent places, above the model's minimum (1,024
tokens on Sonnet, 4,096 on Haiku 4.5). Each stage's share of its input read from
the cache is printed; the goal on Anthropic is 0.6 or more for the writer and the
planner.
"""

from __future__ import annotations

import argparse
import hashlib
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from novel_agent.index.ledger import ledger_path, read_rows
from novel_agent.story.project.folder import create_project
from novel_agent.story.project.recovery import reconciled
from novel_agent.tick.pipeline import tick
from novel_agent.tick.session import Session
from tests.support.fake_anthropic import API_KEY, FakeAnthropicServer, openai_shaped
from tests.support.fake_openai import FakeOpenAIServer
from tests.support.story_server import StoryServer

HELPERS = ("extractor", "summarizer")
STAGES = ("planner", "writer", "extractor", "summarizer", "outline", "auditor")
GOAL = 0.6          # the share of the writer's and planner's input read from Anthropic's cache


@dataclass(frozen=True)
class Recipe:
    """A provider's strong model and small one, and how its servers cache."""

    provider: str
    strong: str
    small: str
    key_env: str
    min_cache: dict[str, int] = field(default_factory=dict)   # Anthropic's minimum, by model


RECIPES = {
    "openai": Recipe("openai", "gpt-4o", "gpt-4o-mini", "OPENAI_API_KEY"),
    "anthropic": Recipe("anthropic", "claude-sonnet-4-6", "claude-haiku-4-5",
                        "ANTHROPIC_API_KEY",
                        min_cache={"claude-sonnet-4-6": 1024, "claude-haiku-4-5": 4096}),
}


class AutomaticCache:
    """OpenAI's automatic prompt cache, as the test server's responder sees it: a request's
    prompt (its messages' words, in order) is read from the cache up to the longest
    prefix of 1,024 words or more, in steps of 128, that an earlier request began with."""

    MIN, STEP = 1024, 128

    def __init__(self, responder: Callable[[dict[str, Any]], Any]):
        self.responder, self.seen, self.lock = responder, set[str](), threading.Lock()

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        words = " ".join(str(m.get("content", "")) for m in body.get("messages", [])).split()
        marks = range(self.MIN, len(words) + 1, self.STEP)
        keys = {n: hashlib.sha1(" ".join(words[:n]).encode()).hexdigest() for n in marks}
        with self.lock:
            cached = max((n for n, key in keys.items() if key in self.seen), default=0)
            self.seen.update(keys.values())
        answer = self.responder(body)
        answer = {"content": answer} if isinstance(answer, str) else dict(answer)
        answer["usage"] = {**(answer.get("usage") or {}),
                           "prompt_tokens_details": {"cached_tokens": cached}}
        return answer


@dataclass
class Bill:
    """A run's ledger, by stage."""

    ticks: int
    seconds: float
    rows: list[dict[str, Any]]

    def dollars(self, stage: str | None = None) -> float:
        return sum(r["cost"] or 0.0 for r in self.rows if stage in (None, r["stage"]))

    def per_100(self, stage: str | None = None) -> float:
        return self.dollars(stage) * 100 / self.ticks

    def cached_share(self, stage: str) -> float:
        rows = [r for r in self.rows if r["stage"] == stage]
        prompt = sum(r["prompt_tokens"] for r in rows)
        return sum(r["cached_tokens"] for r in rows) / prompt if prompt else 0.0

    def models(self, stage: str) -> str:
        return ", ".join(sorted({r["model"] for r in self.rows if r["stage"] == stage}))

    def stages(self) -> list[str]:
        return [s for s in STAGES if any(r["stage"] == s for r in self.rows)]


@contextmanager
def servers(recipe: Recipe, story: StoryServer) -> Iterator[dict[str, str]]:
    """A test server for each of the recipe's two models: their base URLs, by model."""
    with ExitStack() as stack:
        urls = {}
        for model in (recipe.strong, recipe.small):
            if recipe.provider == "anthropic":
                server: Any = FakeAnthropicServer(openai_shaped(story), api_key=API_KEY,
                                                  min_cache_tokens=recipe.min_cache[model])
            else:
                server = FakeOpenAIServer(AutomaticCache(story), model=model)
            urls[model] = stack.enter_context(server).base_url
        yield urls


def llm_config(recipe: Recipe, urls: dict[str, str], helpers: bool) -> dict[str, Any]:
    """The project's `llm`: the strong model for all, or the recipe's small helpers."""
    llm: dict[str, Any] = {"provider": recipe.provider, "model": recipe.strong,
                           "base_url": urls[recipe.strong]}
    if helpers:
        llm["stages"] = {stage: {"model": recipe.small, "base_url": urls[recipe.small],
                                 "api_key_env": recipe.key_env}   # a server of its own
                         for stage in HELPERS}
    return llm


def run(recipe: Recipe, helpers: bool, ticks: int, folder: Path) -> Bill:
    """`ticks` ticks of a new book on the recipe's models; the ledger's rows."""
    # the same name in another folder: the offline model's story is seeded by it
    where = folder / ("helpers" if helpers else "one") / recipe.provider
    project = create_project(where, {
        "name": recipe.provider, "premise": "A lighthouse keeper finds a drowned man's map.",
        "protagonist": "Mara Quill"}, config={"llm": {"provider": recipe.provider}})
    story, started = StoryServer(project), time.monotonic()
    try:
        with servers(recipe, story) as urls:
            config = project.config(flags={f"llm.{key}": value for key, value in
                                           llm_config(recipe, urls, helpers).items()})
            env = {recipe.key_env: API_KEY if recipe.provider == "anthropic" else "sk-test"}
            with reconciled(project), Session.open(project, config, env) as session:
                for _ in range(ticks):
                    tick(session)
    finally:
        story.close()
    return Bill(ticks, time.monotonic() - started, read_rows(ledger_path(project)))


def report(recipe: Recipe, one: Bill, cheap: Bill) -> list[str]:
    lines = [f"{recipe.provider}: {one.ticks} ticks each"]
    for label, bill in ((f"one model ({recipe.strong})", one),
                        (f"cheap helpers ({recipe.strong}; {recipe.small} for "
                         f"{' and '.join(HELPERS)})", cheap)):
        lines.append(f"  {label}: ${bill.per_100():.3f} per 100 ticks "
                     f"({len(bill.rows)} requests, {bill.seconds:.0f} s)")
        total = bill.dollars() or 1.0
        for stage in bill.stages():
            lines.append(f"    {stage:<10} {bill.dollars(stage) / total:6.1%} of the dollars  "
                         f"${bill.per_100(stage):.3f}  {bill.models(stage):<18}  "
                         f"input read from cache {bill.cached_share(stage):.2f}")
    ratio = cheap.dollars() / one.dollars() if one.dollars() else 0.0
    lines.append(f"  ratio, cheap helpers / one model: {ratio:.2f}")
    if recipe.provider == "anthropic":
        shares = {s: cheap.cached_share(s) for s in ("planner", "writer")}
        met = all(v >= GOAL for v in shares.values())
        lines.append("  cache reads, share of input: " + ", ".join(
            f"{s} {v:.2f}" for s, v in shares.items()) + f" (goal >= {GOAL}: "
            f"{'met' if met else 'NOT met'})")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ticks", type=int, default=100)
    parser.add_argument("--providers", nargs="+", choices=list(RECIPES), default=list(RECIPES))
    args = parser.parse_args()
    print(f"stage_costs: {args.ticks} ticks a run, list prices of configs/models.yaml")
    with tempfile.TemporaryDirectory() as folder:
        for provider in args.providers:
            recipe = RECIPES[provider]
            one = run(recipe, False, args.ticks, Path(folder))
            cheap = run(recipe, True, args.ticks, Path(folder))
            print(*report(recipe, one, cheap), sep="\n", flush=True)


if __name__ == "__main__":
    main()
