"""The benches that reach into the tick's steps (they wrap its functions by name) still
run: a rename in the pipeline breaks them, and no other test would say so."""

from __future__ import annotations

import subprocess
import sys

from tests.support.repo import ROOT


def bench(name: str, *args: str) -> str:
    """`python -m NAME ARGS` from the repository's root, as README says to run a bench."""
    done = subprocess.run([sys.executable, "-m", name, *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_tick_phases_times_each_step_of_a_few_ticks():
    out = bench("bench.tick_phases", "--ticks", "12", "--cpu")
    steps = {line.split()[0] for line in out.splitlines()[2:] if line.startswith("  ")}
    assert {"tick", "commit", "tidied_logs", "after_tick", "_build_write"} <= steps, out
    assert "ratio" in out


def test_commit_cost_measures_the_commit_and_the_logs():
    out = bench("bench.commit_cost", "--at", "3", "--window", "2")
    assert out.count("commit at tick") == 1 and "making the prompt logs" in out, out


def test_tick_pair_times_a_new_book_and_a_grown_one_in_turn():
    out = bench("bench.tick_pair", "--at", "6", "--ticks", "4")
    assert "one at tick 7 (ticks 8-11)" in out, out
    rows = {line.split()[0]: line.split()[1:] for line in out.splitlines()[2:]
            if line.startswith("  ") and not line.startswith("  ratio")}
    assert {"tick", "commit", "after_tick"} <= rows.keys(), out
    assert float(rows["tick"][0]) > 0 and float(rows["tick"][1]) > 0 and "ratio" in out


def test_the_audit_bench_and_the_history_cost_bench_run_on_a_few_ticks():
    out = bench("bench.audit", "--scenes", "30", "--offline", "4")
    assert "controls reported:" in out and "offline ticks (4, the two books in turn)" in out, out
    out = bench("bench.history_cost", "--at", "12")
    assert out.splitlines()[1].split()[0] == "12", out
