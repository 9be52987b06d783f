"""`novel fleet` against a batching server: does it keep the server full, and at what cost?

    .venv/bin/python -m bench.fleet                      # K=8 slots, 1 s a request
    .venv/bin/python -m bench.fleet --slots 4 --latency 0.25 --books 1,4,16

The server is the OpenAI-compatible test server (tests/support/fake_openai.py) made a
batching server (tests/support/batching.py): K parallel slots, a fixed latency per
request, so one book alone (one request at a time) uses 1/K of it and its
capacity is K / latency requests/s. It runs in this process; each measured run is
a child process, so its CPU and memory are the client's alone:

- baseline: the single-book `novel run --ticks T` through the same server;
- fleet N: N books, `--concurrency N`, each brought to T ticks.

Printed per run: requests/s as the server saw them (first arrival to last
answer) and the ratio to its capacity; the client's CPU per request, all of it
(the ticks' own work included: opening each book, building prompts, counting
tokens, committing) and, for the fleet, the event loop's part (the scheduler, the
gate, the SDK's async client, HTTP: the fleet's own cost, after a warm-up of the
SDK's lazy imports that any long run pays once); the memory each book
added (peak RSS growth over the N=1 run's, per extra book). Goals (issue 24):
>= 0.8 of capacity for N >= K, < 5 ms client CPU per request, < 20 MB per book.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from novel_agent.story.project.folder import create_project
from tests.support import fake_openai
from tests.support.batching import Batching
from tests.support.fake_openai import API_KEY, FakeOpenAIServer
from tests.support.repo import ROOT
from tests.support.responders import story_responder

NOVEL = [sys.executable, "-c", "from novel_agent.cli import main; main()"]


def make_books(folder: Path, n: int, base_url: str) -> list:
    return [create_project(folder / f"book-{i:03d}", {
        "name": f"book-{i:03d}", "premise": f"Book {i}: a lighthouse keeper finds a map.",
        "preset": "balanced"}, config={"llm": {"provider": "openai", "base_url": base_url,
                                               "model": "gpt-4o-mini"}})
        for i in range(1, n + 1)]


def rss_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def child(args: argparse.Namespace) -> None:
    """One fleet run in this (child) process; prints its measures as JSON."""
    from novel_agent.fleet.scheduler import Fleet, FleetOptions

    books = make_books(Path(args.dir), args.child, args.base_url)
    warm_up(args.base_url)
    fleet = Fleet(books, FleetOptions(concurrency=args.child, ticks=args.ticks),
                  {"OPENAI_API_KEY": API_KEY}, folder=Path(args.dir))
    before, cpu, loop = rss_kb(), time.process_time(), time.thread_time()
    fleet.run()              # the event loop runs on this thread: the gate, the SDK, HTTP
    cpu, loop = time.process_time() - cpu, time.thread_time() - loop
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"cpu": cpu, "loop": loop, "requests": fleet.gate.stats.requests,
                      "rss_kb": peak - before, "ticks": fleet.state.ticks}))


def warm_up(base_url: str) -> None:
    """What any long-running client pays once: the SDK's lazy imports and the building of
    its response models (kept out of the per-request numbers; no request is sent)."""
    import openai
    from openai.types.chat import ChatCompletion

    _ = openai.AsyncOpenAI(api_key="warm-up", base_url=base_url).chat.completions.create
    ChatCompletion.model_validate({
        "id": "w", "object": "chat.completion", "created": 0, "model": "m", "usage": {
            "prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": "w"}}]})


def baseline(server: FakeOpenAIServer, ticks: int, folder: Path) -> dict:
    """The single-book `novel run` as a process; its CPU from RUSAGE_CHILDREN."""
    book = make_books(folder, 1, server.base_url)[0]
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([*NOVEL, "run", "-p", str(book.root), "--ticks", str(ticks), "-q"],
                   check=True, capture_output=True,
                   env={**os.environ, "OPENAI_API_KEY": API_KEY, "PYTHONPATH": str(ROOT)})
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {"cpu": (after.ru_utime + after.ru_stime) - (used.ru_utime + used.ru_stime)}


def fleet_run(server: FakeOpenAIServer, n: int, ticks: int, folder: Path) -> dict:
    out = subprocess.run([sys.executable, "-m", "bench.fleet", "--child", str(n), "--ticks", str(ticks),
                          "--base-url", server.base_url, "--dir", str(folder)],
                         check=True, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slots", type=int, default=8)
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--books", default="1,4,16,64")
    parser.add_argument("--ticks", default="3,2,2,1", help="ticks per book, per N")
    parser.add_argument("--keep-alive", action="store_true",
                        help="serve HTTP/1.1 with keep-alive, as vLLM or llama.cpp do (the "
                             "test server closes every connection by default)")
    parser.add_argument("--child", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--base-url", help=argparse.SUPPRESS)
    parser.add_argument("--dir", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        args.ticks = int(args.ticks)
        return child(args)
    if args.keep_alive:
        fake_openai._Handler.protocol_version = "HTTP/1.1"
    sizes = [int(n) for n in args.books.split(",")]
    ticks = [int(t) for t in args.ticks.split(",")]
    ticks += [ticks[-1]] * (len(sizes) - len(ticks))
    server_side = Batching(story_responder, slots=args.slots, latency=args.latency)
    print(f"server: {args.slots} slots, {args.latency:g} s a request"
          f"{', keep-alive' if args.keep_alive else ''}: capacity "
          f"{server_side.capacity:.1f} requests/s; {os.cpu_count()} cores, load "
          f"{os.getloadavg()[0]:.1f}")
    print(f"{'run':<20}{'ticks':>6}{'requests':>9}{'req/s':>7}{'of capacity':>12}"
          f"{'CPU ms/req':>11}{'loop ms/req':>12}{'MB/book':>9}")
    with FakeOpenAIServer(server_side) as server, tempfile.TemporaryDirectory() as tmp:
        server_side.reset()
        base = baseline(server, ticks[0], Path(tmp) / "baseline")
        n_req = len(server_side.times)
        row("novel run (1 book)", ticks[0], n_req, server_side, base["cpu"] / n_req)
        first = None
        for n, t in zip(sizes, ticks):
            server_side.reset()
            got = fleet_run(server, n, t, Path(tmp) / f"fleet-{n}")
            n_req = len(server_side.times)
            first = first or (n, got["rss_kb"])
            mb = (got["rss_kb"] - first[1]) / 1024 / (n - first[0]) if n > first[0] else None
            row(f"fleet N={n}", got["ticks"], n_req, server_side, got["cpu"] / n_req,
                got["loop"] / n_req, mb)


def row(name: str, ticks: int, requests: int, server_side: Batching, cpu: float,
        loop: float | None = None, mb: float | None = None) -> None:
    rate = server_side.rate()
    loop_ms = f"{loop * 1000:12.1f}" if loop is not None else f"{'':>12}"
    memory = f"{mb:9.1f}" if mb is not None else f"{'':>9}"
    print(f"{name:<20}{ticks:>6}{requests:>9}{rate:>7.1f}{rate / server_side.capacity:>12.2f}"
          f"{cpu * 1000:>11.1f}{loop_ms}{memory}", flush=True)


if __name__ == "__main__":
    main()
