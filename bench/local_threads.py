"""llama.cpp's thread count on shared cores: generation speed quiet and beside a busy process.

    python -m bench.local_threads                         # the installed models, 1 and 2 threads
    python -m bench.local_threads --model smollm2-135m --threads 1 2 --tokens 96

For each model and thread count, starts the in-process llama.cpp server, lets it
write `--tokens` tokens of one prompt `--runs` times, and prints the median
generation and prompt speed (llama.cpp's own timings), first on a quiet machine,
then with one busy-loop Python process per `--busy` (default 1) competing for the
cores. The thread count novel_agent picks (models.local.thread_count) is the one
that keeps its speed when another process is busy.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import urllib.request
from pathlib import Path

from novel_agent.models import registry
from novel_agent.models.local import LocalServer

PROMPT = ("Write the opening of a quiet, uneasy scene: Edda Lorn, a lighthouse keeper on a "
          "storm-bound island in 1911, finds a drowned stranger carrying a map of her own "
          "lighthouse, marked with a room she has never seen.")


def _spin() -> None:
    while True:
        pass


def speeds(server: LocalServer, tokens: int, runs: int) -> tuple[float, float]:
    """Median generation and prompt tok/s over `runs` uncached calls."""
    generated, read = [], []
    for run in range(runs):
        body = {"messages": [{"role": "user", "content": f"({run}) {PROMPT}"}],
                "max_tokens": tokens, "temperature": 0, "cache_prompt": False,
                "ignore_eos": True}
        request = urllib.request.Request(server.address + "/v1/chat/completions",
                                         data=json.dumps(body).encode(),
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=600) as answer:
            timings = json.load(answer)["timings"]
        generated.append(timings["predicted_per_second"])
        read.append(timings["prompt_per_second"])
    return statistics.median(generated), statistics.median(read)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", nargs="+", default=None, help="names (default: installed)")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--tokens", type=int, default=96)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--busy", type=int, default=1, help="busy processes beside it")
    parser.add_argument("--poll", type=int, nargs="+", default=[50],
                        help="llama.cpp's thread polling levels to try (0 sleeps, 50 default)")
    args = parser.parse_args()
    cache = registry.default_cache_dir(os.environ)
    names = args.model or [m for m, e in registry.MODELS.items()
                           if registry.installed(e, cache_dir=cache)]
    print(f"cores: {os.cpu_count()}, {args.tokens} tokens x {args.runs} runs, "
          f"{args.busy} busy process(es) under load")
    print(f"{'model':<20} {'threads':>7} {'quiet gen':>10} {'prompt':>8} "
          f"{'loaded gen':>11} {'prompt':>8}")
    for name in names:
        path = registry.resolve(name, cache_dir=cache)
        for threads, poll in [(t, p) for t in args.threads for p in args.poll]:
            server = LocalServer(Path(path), n_ctx=1024, threads=threads, poll=poll)
            quiet = speeds(server, args.tokens, args.runs)
            busy = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(args.busy)]
            for process in busy:
                process.start()
            try:
                loaded = speeds(server, args.tokens, args.runs)
            finally:
                for process in busy:
                    process.terminate()
                    process.join()
            server.close()
            print(f"{name:<20} {threads:>4} p{poll:<2} {quiet[0]:>10.1f} {quiet[1]:>8.1f} "
                  f"{loaded[0]:>11.1f} {loaded[1]:>8.1f}", flush=True)


if __name__ == "__main__":
    main()
