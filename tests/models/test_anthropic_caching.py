"""The anthropic provider in the pipeline: a book ticked against FakeAnthropicServer answering
like the offline model (StoryServer), its cache breakpoints and its ledger."""

from __future__ import annotations

import json
import os

import pytest

from novel_agent.index.ledger import ledger_path, read_rows
from novel_agent.models.prices import model_price
from novel_agent.story.project.folder import Project
from novel_agent.story.project.recovery import reconciled
from novel_agent.tick.pipeline import tick
from novel_agent.tick.session import Session
from tests.support.clirunner import invoke
from tests.support.fake_anthropic import API_KEY, FakeAnthropicServer, openai_body, openai_shaped
from tests.support.story_server import StoryServer

EPHEMERAL = {"type": "ephemeral"}
STABLE_HEADINGS = {"writer": ("## Story bible", "## The story so far", "## Who and where",
                              "## Earlier, about these people and places"),
                   "planner": ("## Story bible", "## The story so far", "## Characters",
                               "## Known locations", "## Relationships", "## What is known")}
RECENT_HEADINGS = {"writer": ("## Earlier scenes (summaries)", "## The last scenes in full"),
                   "planner": ("## Recent scenes",)}


@pytest.fixture
def anthropic_project(projects_dir, monkeypatch):
    """A new project on the anthropic provider (ANTHROPIC_API_KEY set to the test key)."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", API_KEY)
    invoke("new", "harbour", "--premise", "A lighthouse keeper finds a drowned man's map.",
           "--provider", "anthropic", ok=True)
    return Project(projects_dir / "harbour")


def by_stage(server: FakeAnthropicServer, story: StoryServer) -> dict[str, list[dict]]:
    """The Messages requests the server received, by the stage that sent them."""
    stages: dict[str, list[dict]] = {}
    for body in server.messages:
        stages.setdefault(story.stage(openai_body(body)), []).append(body)
    return stages


def cut(body: dict) -> tuple[str, str, str, list[int]]:
    """The first user message of a request: its text up to the first breakpoint (the
    stable part), from there to the second (the recent scenes), after it; and where its
    blocks end, in characters."""
    blocks = body["messages"][0]["content"]
    marked = [n for n, b in enumerate(blocks) if b.get("cache_control") == EPHEMERAL]
    assert len(marked) == 2, blocks
    ends = [sum(len(b["text"]) for b in blocks[: n + 1]) for n in range(len(blocks))]
    text = "".join(b["text"] for b in blocks)
    first, second = ends[marked[0]], ends[marked[1]]
    return text[:first], text[first:second], text[second:], ends


def test_breakpoints_sit_where_the_prompt_stops_changing_and_the_next_tick_reads_them(
        anthropic_project):
    project, every = anthropic_project, 3
    story = StoryServer(project)
    with FakeAnthropicServer(openai_shaped(story), api_key=API_KEY) as server:
        config = project.config(flags={"llm.base_url": server.base_url,
                                       "generation.checkpoint_summary_interval": every})
        with reconciled(project), Session.open(project, config,
                                               {"ANTHROPIC_API_KEY": API_KEY}) as session:
            for _ in range(8):
                tick(session)
    story.close()
    stages, rows = by_stage(server, story), read_rows(ledger_path(project))
    for stage in ("planner", "writer"):
        bodies = stages[stage]
        assert len(bodies) == 8
        for body in bodies[1:]:
            # the first breakpoint ends the sections that change only at a checkpoint (or
            # when the planner's anchor moves); the second the recent scenes after them
            stable, recent, rest, _ = cut(body)
            headings = [line for line in stable.splitlines() if line.startswith("## ")]
            assert headings and set(headings) <= set(STABLE_HEADINGS[stage]), headings
            assert stable.endswith("\n\n") and recent.startswith("## ")
            assert recent.split("\n")[0] in RECENT_HEADINGS[stage]
            assert recent.endswith("\n\n") and rest.startswith("## ")
            assert rest.split("\n")[0] not in RECENT_HEADINGS[stage] + STABLE_HEADINGS[stage]
            assert body["system"][0]["cache_control"] == EPHEMERAL
        # between two checkpoints (at 3 and 6) the stable part mostly stays put from tick
        # to tick (it moves with tier 3 and the planner's anchor), a scene is appended
        # to the recent ones, and the next tick reads both from the cache: this tick's
        # second breakpoint is one of the next one's block boundaries
        kept = [n for n in range(every + 1, 8) if cut(bodies[n - 1])[0] == cut(bodies[n])[0]]
        assert len(kept) >= 2, (stage, kept)
        appended = 0
        for n in kept:
            (stable, recent, rest, _), (_, recent_next, rest_next, ends_next) = \
                cut(bodies[n - 1]), cut(bodies[n])
            assert rest != rest_next
            (row,) = [r for r in rows if r["tick"] == n + 1 and r["stage"] == stage]
            system = len(bodies[n]["system"][0]["text"].split())
            assert row["cached_tokens"] >= system + len(stable.split()) > 0, (stage, n)
            if recent_next.startswith(recent) and recent_next != recent:
                appended += 1
                assert len(stable) + len(recent) in ends_next
                assert row["cached_tokens"] >= system + len((stable + recent).split())
        assert appended >= 1, stage
    extractor = stages["extractor"][-1]
    assert [b.get("cache_control") for b in extractor["messages"][0]["content"]] == [None]


def test_a_book_on_anthropic_ticks_and_its_ledger_shows_cache_reads_at_their_price(
        anthropic_project, monkeypatch):
    project = anthropic_project
    monkeypatch.setitem(os.environ, "ANTHROPIC_API_KEY", API_KEY)
    story = StoryServer(project)
    with FakeAnthropicServer(openai_shaped(story), api_key=API_KEY) as server:
        invoke("tick", "-p", "harbour", "-n", "4", "--base-url", server.base_url, ok=True)
        usage = json.loads(invoke("usage", "-p", "harbour", "--json", ok=True).output)
    story.close()
    assert project.tick() == 4
    rows = read_rows(ledger_path(project))
    assert {r["provider"] for r in rows} == {"anthropic"}
    assert {r["model"] for r in rows} == {"claude-sonnet-4-6"}
    assert all(r["response_format"] == ("" if r["stage"] in ("writer", "summarizer")
                                        else "tool_use") for r in rows)
    later = [r for r in rows if r["tick"] > 1]
    assert all(r["cached_tokens"] > 0 for r in later), later
    assert sum(r["cache_write_tokens"] for r in rows) > 0
    price = model_price("claude-sonnet-4-6")
    assert price is not None and price.cache_write == 3.75
    for row in rows:
        plain = row["prompt_tokens"] - row["cached_tokens"] - row["cache_write_tokens"]
        dollars = (plain * price.input + row["cached_tokens"] * price.cached_input
                   + row["cache_write_tokens"] * price.cache_write
                   + row["completion_tokens"] * price.output) / 1e6
        assert row["cost"] == pytest.approx(dollars, abs=1e-9)
    total = usage["total"]
    assert total["cached_tokens"] == sum(r["cached_tokens"] for r in rows) > 0
    assert total["cache_write_tokens"] == sum(r["cache_write_tokens"] for r in rows)
    assert API_KEY not in (project.root / ".novel" / "usage.jsonl").read_text()
