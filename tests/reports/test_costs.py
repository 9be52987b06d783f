"""Prices (table, lookup, override) and the cost ceiling: pure checks, and a run that
stops before the tick that would pass it."""

from __future__ import annotations

import pytest

from novel_agent.config.layers import load_config, load_yaml_layer
from novel_agent.errors import ConfigError, CostCeilingError
from novel_agent.index.ledger import ledger_path
from novel_agent.models.prices import Price, load_price_table, match_price, price_for
from novel_agent.paths import config_dir
from novel_agent.reports.costs import check_ceiling, estimate_next_tick, forecast, tick_costs
from novel_agent.story.project.folder import Project
from tests.support.clirunner import invoke
from tests.support.fake_openai import FakeOpenAIServer
from tests.support.projects import set_llm
from tests.support.repo import page
from tests.support.responders import priced


def rows(*costs_per_tick, stage="writer"):
    """One row per tick with the given cost, ids rising."""
    return [{"id": n, "tick": n, "stage": stage, "cost": cost}
            for n, cost in enumerate(costs_per_tick, 1)]


# ---------------------------------------------------------------- pure functions


def test_tick_costs_estimate_and_forecast():
    history = rows(0.01, 0.02, 0.03) + [{"id": 9, "tick": 3, "stage": "summarizer", "cost": 0.05}]
    assert tick_costs(history) == {1: 0.01, 2: 0.02, 3: pytest.approx(0.08)}
    assert estimate_next_tick(history) == pytest.approx(0.08)         # the dearest tick
    assert estimate_next_tick(history, window=2) == pytest.approx(0.08)
    assert forecast(history, ticks=100) == pytest.approx((0.01 + 0.02 + 0.08) / 3 * 100)
    assert estimate_next_tick([]) is None and forecast([]) is None


def test_a_tick_of_unknown_price_is_not_estimated_from():
    history = rows(0.01, None)
    assert tick_costs(history) == {1: 0.01, 2: None}
    assert estimate_next_tick(history) == 0.01


def test_check_ceiling_stops_before_the_tick_that_would_pass_it():
    history = rows(0.003, 0.003)
    check_ceiling(history, 0.00975)                    # 0.006 spent + 0.003 + 25%: allowed
    check_ceiling(history, 0)                          # no ceiling
    with pytest.raises(CostCeilingError) as caught:
        check_ceiling(history, 0.008, next_tick=3)
    error = caught.value
    assert (error.spent, error.estimate, error.ceiling, error.tick) == (
        pytest.approx(0.006), pytest.approx(0.00375), 0.008, 3)
    assert error.exit_code == 4
    assert str(error) == ("cost ceiling: $0.0060 spent of llm.max_cost $0.0080, and tick 3 "
                          "would cost about $0.0037 (the dearest of the last 2 ticks, and 25% more): not started")


def test_a_run_ceiling_counts_the_runs_own_spending():
    history = rows(0.5, 0.5, 0.003)                    # ids 1, 2 before the run; 3 in it
    check_ceiling(history, 0.63, label="--max-cost", spent_after=2)   # 0.003 + 0.625 ≤ 0.63
    with pytest.raises(CostCeilingError, match="--max-cost"):
        check_ceiling(history, 0.50, label="--max-cost", spent_after=2)


def test_with_no_history_the_first_tick_is_measured():
    check_ceiling([], 0.0001)
    with pytest.raises(CostCeilingError, match="none measured yet"):
        check_ceiling([{"id": 1, "tick": 0, "stage": "summarizer", "cost": 0.2}], 0.1)


# ---------------------------------------------------------------- the run


def test_a_run_stops_before_the_tick_that_would_pass_the_ceiling(openai_project,  # noqa: F811
                                                                  snapshot):
    # $1 in, $0.5 cached, $2 out per million: (600 + 200 + 200) / 1M = $0.001 a call,
    # $0.003 a tick; after 2 ticks $0.006 is spent and a third would reach $0.009.
    set_llm(openai_project, llm__prices={"input": 1, "cached_input": 0.5, "output": 2},
            llm__max_cost=0.008)
    with FakeOpenAIServer(priced) as server:
        result = invoke("tick", "-p", "harbour", "-n", "5", "--base-url",
                        server.base_url)
        assert result.exit_code == 4, result.output
        assert result.output.splitlines()[-1] == (
            "Error: cost ceiling: $0.0060 spent of llm.max_cost $0.0080, and tick 3 would cost "
            "about $0.0037 (the dearest of the last 2 ticks, and 25% more): not started")
        assert result.output.splitlines()[-1] in page("guides/costs.md")
        assert len([r for r in server.requests if r["path"].endswith("/chat/completions")]) == 6
        project = Project(openai_project)
        assert project.tick() == 2 and not project.scene_path(3).exists()
        assert not project.drafts_dir.exists() or not any(project.drafts_dir.iterdir())
        before, ledger = snapshot(openai_project), ledger_path(project).read_bytes()
        again = invoke("tick", "-p", "harbour", "--base-url", server.base_url)
        assert again.exit_code == 4 and "tick 3 would cost" in again.output
        assert len(server.requests) == 6                        # no call was made
    assert snapshot(openai_project) == before and ledger_path(project).read_bytes() == ledger


def calls_to(server: FakeOpenAIServer) -> list[dict]:
    """The model calls a server heard (not the window an unknown model's name asked of it:
    a llama.cpp server's GET /props)."""
    return [r for r in server.requests if r["method"] == "POST"]


def test_a_ceiling_on_an_unknown_price_is_an_error_at_start(openai_project):  # noqa: F811
    set_llm(openai_project, llm__model="my-finetune", llm__max_cost=1.0)
    with FakeOpenAIServer(priced) as server:
        result = invoke("tick", "-p", "harbour", "--base-url",
                        server.base_url)
    assert result.exit_code == 1
    assert ("llm.max_cost is set, but the price of my-finetune: unknown (add llm.prices"
            in result.output)
    assert calls_to(server) == [] and Project(openai_project).tick() == 0


def test_offline_never_reaches_a_ceiling(project):
    set_llm(project.root, llm__max_cost=0.000001)
    result = invoke("tick", "-p", "harbour", "-n", "2")
    assert result.exit_code == 0 and project.tick() == 2


# ---------------------------------------------------------------- prices


def test_the_shipped_prices_load_and_match():
    table = load_price_table(config_dir() / "models.yaml")
    assert table["gpt-4o-mini"] == Price(0.15, 0.075, 0.6, "2025-08-07",
                                         "configs/models.yaml: gpt-4o-mini")
    assert all(p.cached_input <= p.input for p in table.values())
    for name, matched in [("gpt-4o-mini-2024-07-18", "gpt-4o-mini"),
                          ("openai/gpt-4.1-mini", "gpt-4.1-mini"), ("GPT-4o", "gpt-4o"),
                          ("gpt-4-0613", "gpt-4"), ("gpt-4o-2024-05-13", "gpt-4o-2024-05-13"),
                          ("o3-pro", None), ("gpt-4o-audio-preview", None),
                          ("ft:gpt-4o-mini-2024-07-18:org::x", None), ("llama3.1", None)]:
        assert match_price(name, table) == matched, name


def test_price_for_each_provider(tmp_path):
    def config(**llm):
        path = tmp_path / "p.yaml"
        import yaml
        path.write_text(yaml.safe_dump({"llm": llm}))
        return load_config(load_yaml_layer(path))

    assert price_for(config(provider="offline")).cost(10**6, 0, 10**6) == 0
    assert price_for(config(provider="openai", model="gpt-4o")).input == 2.5
    assert price_for(config(provider="openai", model="llama3.1")) is None
    own = price_for(config(provider="openai", model="llama3.1",
                           prices={"input": 0, "output": 0}))
    assert own == Price(0.0, 0.0, 0.0, source="llm.prices")


@pytest.mark.parametrize("entry, line, message", [
    ("{input: 1, cached_input: 1, output: 2}", 4, "'m.checked' must be the date"),
    ("{input: 1, cached_input: 1, output: -2, checked: 2025-01-01}", 4,
     "'m.output' must be a number of dollars"),
    ("{input: 1, cached_input: 1, output: 2, checked: 2025-01-01, tier: batch}", 4,
     "unknown key 'tier'"),
    ("12", 4, "'m' must be a mapping"),
])
def test_a_broken_price_names_file_and_line(tmp_path, entry, line, message):
    path = tmp_path / "models.yaml"
    path.write_text(f"models:\n  m: {{window: 10, max_output: 5}}\nprices:\n  m: {entry}\n")
    with pytest.raises(ConfigError) as caught:
        load_price_table(path)
    assert caught.value.line == line and message in str(caught.value)
    assert str(caught.value).startswith(f"{path}:{line}: ")


@pytest.mark.parametrize("prices, message", [
    ("{input: 1}", "needs input and output"),
    ("{input: 1, output: 2, batch: 1}", "unknown key 'batch'"),
    ("{input: -1, output: 2}", "llm.prices.input: must be a finite number, 0 or more, not -1"),
    ("{input: cheap, output: 2}", "llm.prices.input must be float"),
    ("5", "llm.prices must be a mapping"),
])
def test_bad_llm_prices_name_file_and_line(tmp_path, prices, message):
    path = tmp_path / "project.yaml"
    path.write_text(f"llm:\n  provider: openai\n  prices: {prices}\n")
    with pytest.raises(ConfigError) as caught:
        load_config(load_yaml_layer(path))
    assert caught.value.line == 3 and message in str(caught.value)


def test_a_negative_ceiling_is_refused(tmp_path):
    path = tmp_path / "project.yaml"
    path.write_text("llm:\n  max_cost: -1\n")
    with pytest.raises(ConfigError, match="llm.max_cost: must be a finite number, 0 or more, not -1"):
        load_config(load_yaml_layer(path))


def test_usage_shows_the_ceiling(openai_project):  # noqa: F811
    set_llm(openai_project, llm__max_cost=2)
    with FakeOpenAIServer(priced) as s:
        invoke("tick", "-p", "harbour", "--base-url", s.base_url)
    result = invoke("usage", "-p", "harbour")
    assert "ceiling         llm.max_cost $2.00: $0.0005 spent, $2.00 left" in result.output


def test_novel_run_max_cost_stops_the_run_before_the_tick_that_would_pass_it(
        openai_project, snapshot):  # noqa: F811
    # $0.003 a tick (see above): --max-cost 0.007 lets 2 ticks run; the third would pass it
    set_llm(openai_project, llm__prices={"input": 1, "cached_input": 0.5, "output": 2})
    with FakeOpenAIServer(priced) as server:
        result = invoke("run", "-p", "harbour", "--ticks", "5", "--quiet",
                        "--max-cost", "0.007", "--base-url",
                        server.base_url)
        calls = len([r for r in server.requests if r["path"].endswith("/chat/completions")])
    assert result.exit_code == 4, result.output
    assert ("cost ceiling: $0.0060 spent of --max-cost $0.0070, and tick 3 would cost about "
            "$0.0037" in result.output)
    assert calls == 6 and Project(openai_project).tick() == 2


def test_novel_run_with_a_ceiling_on_an_unknown_price_stops_before_any_call(openai_project):  # noqa: F811,E501
    set_llm(openai_project, llm__model="my-finetune")
    with FakeOpenAIServer(priced) as server:
        result = invoke("run", "-p", "harbour", "--ticks", "2", "--quiet",
                        "--max-cost", "1", "--base-url", server.base_url)
    assert result.exit_code == 1 and "--max-cost is set, but the price of my-finetune" in (
        result.output)
    assert calls_to(server) == [] and Project(openai_project).tick() == 0
