"""The usage ledger: every call recorded (through the real SDK), priced, restorable;
`novel usage` totals, breakdowns and unknown prices."""

from __future__ import annotations

import json

import pytest

from novel_agent.errors import FileFormatError, ModelError
from novel_agent.index.db import Index
from novel_agent.index.ledger import ledger_path, read_rows, restore_usage
from novel_agent.models.base import Request
from novel_agent.models.openai_compat import OpenAICompatModel
from novel_agent.models.prices import Price
from novel_agent.models.recording import RecordingModel
from novel_agent.story.project.folder import Project
from tests.support.clirunner import invoke
from tests.support.fake_openai import FakeOpenAIServer
from tests.support.projects import set_llm
from tests.support.repo import block
from tests.support.responders import USAGE, priced
from tests.support.ticking import run_ticks

# gpt-4o-mini: (600 × $0.15 + 400 × $0.075 + 100 × $0.60) / 1M = $0.00018 a call
CALL_COST = (600 * 0.15 + 400 * 0.075 + 100 * 0.60) / 1_000_000


def usage_json(*extra) -> dict:
    result = invoke("usage", "-p", "harbour", "--json", *extra)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def chat_requests(server) -> list[dict]:
    return [r for r in server.requests if r["path"].endswith("/chat/completions")]


# ---------------------------------------------------------------- through the SDK


def test_every_call_is_recorded_and_priced_exactly(openai_project):  # noqa: F811
    set_llm(openai_project, generation__checkpoint_summary_interval=2)
    with FakeOpenAIServer(priced) as server:
        result = invoke("tick", "-p", "harbour", "-n", "2", "--base-url", server.base_url,
                        "--model", "gpt-4o-mini")
    assert result.exit_code == 0, result.output
    calls = len(chat_requests(server))
    report = usage_json()
    total = report["total"]
    assert (total["calls"], total["prompt_tokens"], total["cached_tokens"],
            total["completion_tokens"]) == (calls, 1000 * calls, 400 * calls, 100 * calls)
    assert total["cost"] == pytest.approx(CALL_COST * calls, abs=1e-9)
    assert total["cache_share"] == 0.4 and total["unknown_price_calls"] == 0
    stages = {g["stage"]: g for g in report["groups"]}
    assert list(stages) == ["planner", "writer", "extractor", "summarizer"]
    assert stages["summarizer"]["calls"] == calls - 6 >= 1          # the checkpoint at tick 2
    assert report["summarizer_share"]["cost"] == pytest.approx((calls - 6) / calls, abs=1e-4)
    assert report["price"].startswith("price per million tokens: $0.15 input, $0.075 cached")
    words = report["words"]
    assert report["per_1000_words"]["cost"] == pytest.approx(CALL_COST * calls * 1000 / words,
                                                             abs=1e-6)
    # the forecast: the mean of the 2 ticks measured, times 100
    assert report["forecast"]["cost"] == pytest.approx(CALL_COST * calls / 2 * 100, abs=1e-6)
    # every column of a row, in the ledger file and the index alike
    rows = read_rows(ledger_path(Project(openai_project)))
    assert len(rows) == calls
    first = rows[0]
    assert {k: first[k] for k in ("tick", "stage", "model", "provider", "prompt_tokens",
                                  "cached_tokens", "completion_tokens", "attempts",
                                  "finish_reason", "error", "response_format")} == {
        "tick": 1, "stage": "planner", "model": "gpt-4o-mini", "provider": "openai",
        "prompt_tokens": 1000, "cached_tokens": 400, "completion_tokens": 100, "attempts": 1,
        "finish_reason": "stop", "error": "", "response_format": "json_schema"}
    assert first["cost"] == pytest.approx(CALL_COST) and first["latency"] > 0
    assert first["at"].endswith("+00:00")


def test_the_docs_show_what_novel_usage_prints(openai_project):  # noqa: F811
    set_llm(openai_project, generation__checkpoint_summary_interval=2, llm__max_cost=1)
    with FakeOpenAIServer(priced) as server:
        invoke("tick", "-p", "harbour", "-n", "2", "--base-url", server.base_url,
               "--model", "gpt-4o-mini")
    assert invoke("usage", "-p", "harbour").output == block(
        "guides/costs.md", "usage of harbour\nprice per million tokens: $0.15")


def test_the_table_shows_the_breakdown_and_the_ratios(openai_project):  # noqa: F811
    with FakeOpenAIServer(priced) as server:
        invoke("tick", "-p", "harbour", "-n", "2", "--base-url", server.base_url,
               "--model", "gpt-4o-mini")
    result = invoke("usage", "-p", "harbour", "--by", "tick")
    lines = result.output.splitlines()
    assert lines[0] == "usage of harbour"
    assert lines[3].split() == ["tick", "calls", "prompt", "cached", "completion", "cost"]
    assert lines[4].split() == ["1", "3", "3,000", "1,200", "300", "$0.0005"]
    assert lines[6].split() == ["total", "6", "6,000", "2,400", "600", "$0.0011"]
    assert "prompt cache    40% of prompt tokens were cached" in lines
    assert "forecast        next 100 ticks ≈ $0.0540 (the mean of the last 2 ticks)" in lines
    since = usage_json("--since", "2", "--by", "tick")
    assert [g["tick"] for g in since["groups"]] == [2]
    assert usage_json("--since", "2000-01-01")["total"]["calls"] == 6
    assert usage_json("--since", "2999-01-01")["total"]["calls"] == 0
    bad = invoke("usage", "-p", "harbour", "--since", "last week")
    assert bad.exit_code == 2 and "a tick number or a date" in bad.output


def test_an_unknown_price_is_unknown_never_zero(openai_project):  # noqa: F811
    set_llm(openai_project, llm__model="my-finetune")
    with FakeOpenAIServer(priced) as server:
        invoke("tick", "-p", "harbour", "--base-url", server.base_url)
    result = invoke("usage", "-p", "harbour")
    assert "price of my-finetune: unknown (add llm.prices to project.yaml" in result.output
    total = [line for line in result.output.splitlines() if line.startswith("total")][0]
    assert total.split() == ["total", "3", "3,000", "1,200", "300", "unknown"]
    assert "$0" not in result.output
    assert "note: 3 call(s) of unknown price are not in the dollars" in result.output
    report = usage_json()
    assert report["total"]["cost"] is None and report["forecast"]["cost"] is None
    assert report["per_1000_words"]["cost"] is None and report["per_1000_words"]["tokens"] > 0


def test_llm_prices_override_the_table(openai_project):  # noqa: F811
    set_llm(openai_project, llm__prices={"input": 1, "output": 2})   # cached bills as input
    with FakeOpenAIServer(priced) as server:
        invoke("tick", "-p", "harbour", "--base-url", server.base_url, "--model", "gpt-4o")
    report = usage_json()
    assert report["total"]["cost"] == pytest.approx(3 * (1000 * 1 + 100 * 2) / 1e6)
    assert report["price"] == ("price per million tokens: $1 input, $1 cached, $2 output "
                               "(llm.prices)")


def test_a_failed_call_is_recorded_with_its_error(openai_project):  # noqa: F811
    set_llm(openai_project, llm__max_retries=1)
    with FakeOpenAIServer(priced, fail_first=[503, 503]) as server:
        result = invoke("tick", "-p", "harbour", "--base-url",
                        server.base_url, "--model", "gpt-4o-mini")
    assert result.exit_code == 1
    (row,) = read_rows(ledger_path(Project(openai_project)))
    assert (row["stage"], row["attempts"], row["finish_reason"], row["prompt_tokens"],
            row["completion_tokens"], row["cost"]) == ("planner", 2, "error", 0, 0, 0.0)
    assert "HTTP 503" in row["error"] and row["latency"] > 0
    report = usage_json()
    assert report["total"]["failed"] == 1 and "HTTP 503" in report["errors"][0]


@pytest.mark.parametrize("stream", [False, True])
def test_cached_tokens_are_read_streaming_or_not(stream):
    with FakeOpenAIServer(lambda body: {"content": "Rain.", "usage": USAGE}) as server:
        model = RecordingModel(OpenAICompatModel(server.base_url, "gpt-4o-mini", None, 5, 0, 0.5,
                                                 stream=stream),
                               tick=7, model="gpt-4o-mini", provider="openai",
                               price=Price(0.15, 0.075, 0.6))
        model.complete(Request("writer", [{"role": "user", "content": "Go."}], 50))
    (row,) = model.drain()
    assert (row["tick"], row["prompt_tokens"], row["cached_tokens"], row["completion_tokens"],
            row["cost"]) == (7, 1000, 400, 100, pytest.approx(CALL_COST))


def test_an_empty_answer_keeps_the_tokens_the_server_reported():
    with FakeOpenAIServer(lambda body: {"content": "", "usage": USAGE}) as server:
        model = RecordingModel(OpenAICompatModel(server.base_url, "m", None, 5, 0, 0.5),
                               model="m", provider="openai", price=None)
        with pytest.raises(ModelError, match="empty answer"):
            model.complete(Request("writer", [{"role": "user", "content": "Go."}], 50))
    (row,) = model.drain()
    assert (row["prompt_tokens"], row["completion_tokens"], row["cost"]) == (1000, 100, None)
    assert "empty answer" in row["error"]


# ---------------------------------------------------------------- ledger and index


def test_the_index_is_restored_from_usage_jsonl(project):
    run_ticks(project, 3)
    index = Index(project.index_db)
    before = [{k: v for k, v in row.items() if k != "id"} for row in index.usage_rows()]
    index.close()
    assert len(before) == 9 and before == read_rows(ledger_path(project))
    for path in project.novel_dir.glob("index.db*"):
        path.unlink()
    index = Index(project.index_db)
    assert index.usage_rows() == []
    assert restore_usage(project, index) == 9
    assert [{k: v for k, v in r.items() if k != "id"} for r in index.usage_rows()] == before
    assert restore_usage(project, index) == 9 and len(index.usage_rows()) == 9  # no doubles
    index.close()


def test_usage_reads_the_ledger_file_when_the_index_has_no_rows(project):
    run_ticks(project, 2)
    for path in project.novel_dir.glob("index.db*"):
        path.unlink()
    assert usage_json()["total"]["calls"] == 6


def test_a_cut_short_last_line_is_skipped_and_a_bad_line_named(project):
    run_ticks(project, 1)
    path = ledger_path(project)
    text = path.read_text()
    path.write_text(text + '{"tick": 2, "stage": "plan')
    assert len(read_rows(path)) == 3
    path.write_text("not json\n" + text)
    with pytest.raises(FileFormatError) as caught:
        read_rows(path)
    assert caught.value.line == 1 and str(caught.value).startswith(f"{path}:1: ")


def test_an_old_index_gains_the_ledger_columns(tmp_path):
    import sqlite3
    path = tmp_path / "index.db"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE _migrations (name TEXT PRIMARY KEY)")
    db.execute("CREATE TABLE usage (id INTEGER PRIMARY KEY, tick INTEGER, stage TEXT, model TEXT, "
               "prompt_tokens INTEGER, completion_tokens INTEGER, cached_tokens INTEGER, "
               "latency REAL, response_format TEXT)")
    db.executemany("INSERT INTO _migrations VALUES (?)", [("001_token_counts",), ("002_usage",)])
    db.execute("CREATE TABLE token_counts (key TEXT PRIMARY KEY, tokens INTEGER NOT NULL)")
    db.execute("INSERT INTO usage (tick, stage, prompt_tokens) VALUES (4, 'writer', 10)")
    db.commit()
    db.close()
    index = Index(path)
    (row,) = index.usage_rows()
    assert (row["tick"], row["prompt_tokens"], row["cost"], row["provider"]) == (4, 10, None, None)
    assert index.migrate() == []
    index.close()


def test_offline_costs_nothing_and_says_so(project):
    run_ticks(project, 1)
    result = invoke("usage", "-p", "harbour")
    assert "price: 0 (offline model)" in result.output
    assert [l for l in result.output.splitlines() if l.startswith("total")][0].endswith("$0")


def test_novel_summarize_records_its_calls_too(project):
    set_llm(project.root, generation__checkpoint_summary_interval=3)
    run_ticks(project, 3)
    before = len(read_rows(ledger_path(project)))
    result = invoke("summarize", "-p", "harbour", "--rebuild")
    assert result.exit_code == 0, result.output
    rows = read_rows(ledger_path(project))[before:]
    assert rows and {(r["stage"], r["tick"]) for r in rows} == {("summarizer", 3)}


def three_models(root) -> None:
    """Tick 1 on gpt-4o-mini, tick 2 on gpt-4o, tick 3 on a model of unknown price."""
    with FakeOpenAIServer(priced) as server:
        for model in ("gpt-4o-mini", "gpt-4o", "my-finetune"):
            result = invoke("tick", "-p", "harbour", "--base-url", server.base_url,
                            "--model", model)
            assert result.exit_code == 0, result.output


def test_usage_by_model(openai_project):  # noqa: F811
    three_models(openai_project)
    logs = sorted(Project(openai_project).log_dir.glob("tick_*_*.json"))
    ours = sum(json.loads(p.read_text())["tokens"] for p in logs
               if p.stem.split("_")[2] in ("planner", "writer", "extractor"))
    # a call: gpt-4o-mini $0.00018; gpt-4o (600 × 2.50 + 400 × 1.25 + 100 × 10) / 1M = $0.003
    assert invoke("usage", "-p", "harbour", "--by", "model").output == """\
usage of harbour
price per million tokens: $0.15 input, $0.075 cached, $0.6 output (configs/models.yaml: gpt-4o-mini, checked 2025-08-07)

model         calls      prompt     cached  completion         cost
gpt-4o            3       3,000      1,200         300      $0.0090
gpt-4o-mini       3       3,000      1,200         300      $0.0005
my-finetune       3       3,000      1,200         300      unknown
total             9       9,000      3,600         900    ≥ $0.0095

prompt cache    40% of prompt tokens were cached
per 1,000 words 99,000 tokens, $0.0954 (100 words in 3 scenes)
summarizer      0% of the tokens, 0% of the cost
forecast        next 100 ticks ≈ $0.4770 (the mean of the last 2 ticks)
{COUNTS}
note: 3 call(s) of unknown price are not in the dollars
""".replace("{COUNTS}", "token counts    prompt tokens above are the server's own count; ours "
            f"(cl100k_base) of 9 of those prompts: {ours:,}, the server's 9,000 "
            f"(+{round((9000 - ours) / ours * 100)}%)")


def test_usage_by_day_is_by_the_utc_day_of_each_call(openai_project):  # noqa: F811
    three_models(openai_project)
    path = ledger_path(Project(openai_project))
    rows = read_rows(path)
    days = {1: "2026-11-01T23:59:59+00:00", 2: "2026-11-02T00:00:01+00:00",
            3: "2026-11-02T08:30:00+00:00"}
    path.write_text("".join(json.dumps({**row, "at": days[row["tick"]]}) + "\n" for row in rows))
    assert invoke("reindex", "-p", "harbour").exit_code == 0   # the index from usage.jsonl
    assert invoke("usage", "-p", "harbour", "--by", "day").output.splitlines()[3:8] == [
        "day           calls      prompt     cached  completion         cost",
        "2026-11-01        3       3,000      1,200         300      $0.0005",
        "2026-11-02        6       6,000      2,400         600    ≥ $0.0090",
        "total             9       9,000      3,600         900    ≥ $0.0095",
        ""]
    assert invoke("usage", "-p", "harbour", "--by", "day", "--since", "2026-11-02"
                  ).output.splitlines()[3:6] == [
        "day           calls      prompt     cached  completion         cost",
        "2026-11-02        6       6,000      2,400         600    ≥ $0.0090",
        "total             6       6,000      2,400         600    ≥ $0.0090"]


def test_the_servers_counts_are_labelled_where_they_differ_from_ours(openai_project):  # noqa: F811
    with FakeOpenAIServer(priced) as server:
        invoke("tick", "-p", "harbour", "-n", "2", "--base-url", server.base_url,
               "--model", "gpt-4o-mini")
    logs = sorted(Project(openai_project).log_dir.glob("tick_*_*.json"))
    ours = sum(json.loads(p.read_text())["tokens"] for p in logs
               if p.stem.split("_")[2] in ("planner", "writer", "extractor"))
    counts = usage_json()["counts"]
    assert counts == {"source": "server", "calls": 6, "server": 6000, "ours": ours,
                      "encoding": "o200k_base"} and ours != 6000
    line = f"ours (o200k_base) of 6 of those prompts: {ours:,}, the server's 6,000"
    assert line in invoke("usage", "-p", "harbour").output
    stats = invoke("stats", "-p", "harbour").output
    assert "token counts      prompt tokens above are the server's own count; " + line in stats


def test_offline_counts_are_not_set_against_ours(project):
    run_ticks(project, 1)
    assert usage_json()["counts"]["calls"] == 0
    assert "token counts" not in invoke("usage", "-p", "harbour").output
