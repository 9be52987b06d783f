"""Benchmark: the writer's context build cost as the story grows (issue: the context engine).

    python -m bench.context_scaling            # 10, 100, 1,000, 10,000 scenes
    python -m bench.context_scaling --quick    # 10, 100, 1,000

Builds synthetic projects on disk (scene files with front matter, realistic
lengths), then times the writer's context build for the next tick — reading
only the scenes the tiers use, as a real tick does in a fresh process with a
warm .novel/index.db — beside a naive builder that reads every scene file.
Prints the median build time per size, the ratio 10,000/100 for both, the
prompt tokens per size, and the prefix share of consecutive writer prompts.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from novel_agent.config.layers import load_config
from novel_agent.context.builders import scene_full, scene_summary
from novel_agent.context.prompts import render_stage
from novel_agent.context.report import prefix_share
from novel_agent.context.sections import Context, Section, story_bible
from novel_agent.context.writer import Piece
from novel_agent.files import write_yaml
from novel_agent.index.db import Index
from novel_agent.models.limits import limits_for
from novel_agent.models.offline import OfflineModel
from novel_agent.story.memory.files import memory_files
from novel_agent.story.project.folder import create_project
from novel_agent.story.scenes import (
    SceneReader,
    load_scenes,
)
from novel_agent.text.tokens import TokenCounter
from novel_agent.tick.session import Session
from novel_agent.tick.stage_prompts import build_writer
from tests.support import story_factory as sf

REPEATS = 15


def length(tick: int) -> int:
    """Realistic scene lengths: mostly 250-600 words, now and then a long one."""
    rng = random.Random(tick)
    return int(min(3000, max(120, rng.lognormvariate(6.0, 0.45))))


def make_project(root: Path, n: int):
    project = create_project(root, {"name": f"bench{n}", "premise": sf.story().premise,
                                    "genre": "mystery"}, config={"llm": {"provider": "offline"}})
    scenes = sf.SyntheticScenes(n, length, seed=1)
    for tick in range(1, n + 1):
        path = project.scene_path(tick)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(scenes(tick).render(), encoding="utf-8")
    memory = sf.memory()
    for path, text in memory_files(memory, project.memory_dir).items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    write_yaml(project.state_file, {"tick": n})
    return project, memory


def tier3_for(n: int) -> list[Piece]:
    """A bounded summary tree (what the checkpoint issue's selection hands over)."""
    count = min(n // 10, 12)
    return [Piece(f"summary_{i}", f"### Scenes {i * 10 + 1}–{i * 10 + 10}\n" +
                  "\n".join(f"- {sf.prose(22, i * 7 + j)}" for j in range(4)))
            for i in range(count)]


_LIMITS: dict = {}


def limits_once(config):
    """The model's limits, read once per run (a session reads them once per command)."""
    if "limits" not in _LIMITS:
        _LIMITS["limits"] = limits_for(config)
    return _LIMITS["limits"]


def engine_build(project, config, memory, n, state, counter):
    write_yaml(project.state_file, {"tick": n, "writer_tiers": state})
    session = Session(project, config, OfflineModel(), counter=counter,
                      limits=limits_once(config))
    return build_writer(session, story=sf.story(), memory=memory,
                        plan=sf.plan(n + 1), tick=n + 1, scenes=SceneReader(project.scenes_dir),
                        tool_results=["New location: the salt market"], tier3=tier3_for(n))


def naive_build(project, config, memory, n, counter):
    """Reads every scene file, then keeps the last few: what the engine avoids."""
    scenes = load_scenes(project.scenes_dir)
    full, summaries = scenes[-2:], scenes[-5:-2]
    sections = (Section("bible", "Story bible", story_bible(sf.story()), pinned=True),
                Section("recent_summaries", "Earlier scenes",
                        "\n\n".join(scene_summary(s) for s in summaries)),
                Section("recent_full", "Last scenes", "\n\n".join(scene_full(s) for s in full)),
                Section("intention", "This scene", sf.plan(n + 1).intention, pinned=True))
    messages = render_stage(Context("writer", sections, {"tick": n + 1, "min_words": 200,
                                                          "max_words": 400,
                                                          "title": sf.plan(n + 1).title,
                                                          "goes_on": False}))
    return counter.count_messages(messages)


def median_ms(fn, repeats: int = REPEATS) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def prefix_run(project, config, memory, n, ticks=60):
    """Consecutive writer prompts for the last `ticks` ticks: their shared-prefix shares."""
    counter = TokenCounter("gpt-4o-mini", store=Index(project.index_db))
    state, previous, shares = {}, None, []
    for last in range(max(1, n - ticks), n + 1):
        built = engine_build(project, config, memory, last, state, counter)
        state = built.state
        if previous is not None:
            shares.append(prefix_share(built.messages, previous, counter)[1])
        previous = built.messages
    return shares


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="skip the 10,000-scene story")
    parser.add_argument("--sizes", type=int, nargs="+", default=None,
                        help="the stories' numbers of scenes (the tests: 10 30)")
    args = parser.parse_args()
    sizes = args.sizes or ([10, 100, 1000] if args.quick else [10, 100, 1000, 10000])
    config = load_config(flags={"llm.provider": "offline", "llm.model": "gpt-4o-mini",
                                "context.max_prompt_tokens": 16000})
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            t0 = time.perf_counter()
            project, memory = make_project(Path(tmp) / f"p{n}", n)
            made = time.perf_counter() - t0
            index = Index(project.index_db)
            warm = TokenCounter("gpt-4o-mini", store=index)
            first = engine_build(project, config, memory, n, {}, warm)
            index.flush()
            state = first.state

            def engine():
                counter = TokenCounter("gpt-4o-mini", store=index)  # a fresh process, warm cache
                return engine_build(project, config, memory, n, state, counter)

            built = engine()
            naive_counter = TokenCounter("gpt-4o-mini", store=index)
            rows[n] = {"engine": median_ms(engine),
                       "naive": median_ms(lambda: naive_build(project, config, memory, n,
                                                              naive_counter),
                                          REPEATS if n < 5000 else 3),
                       "tokens": built.report["tokens"], "budget": built.report["budget"],
                       "full": len(next(s for s in built.report["sections"]
                                        if s["name"] == "recent_full")["items"]),
                       "setup": made}
            print(f"  built {n:>6}-scene story in {made:.1f}s", file=sys.stderr)
        shares = prefix_run(project, config, memory, sizes[-1])
    print(f"writer context build, median of {REPEATS} runs (naive at 10,000: 3 runs), in ms")
    print(f"{'scenes':>8} {'engine':>9} {'naive':>9} {'prompt tokens':>14} {'full-text scenes':>17}")
    for n, r in rows.items():
        print(f"{n:>8} {r['engine']:>9.2f} {r['naive']:>9.2f} {r['tokens']:>8,}/{r['budget']:,}"
              f" {r['full']:>10}")
    top, base = sizes[-1], 100 if 100 in rows else sizes[0]
    print(f"ratio {top:,}/{base:,}: engine {rows[top]['engine'] / rows[base]['engine']:.2f}  "
          f"naive {rows[top]['naive'] / rows[base]['naive']:.2f}")
    print(f"prefix share of consecutive writer prompts ({len(shares)} ticks, story of {top:,}): "
          f"median {statistics.median(shares):.0%}, mean {statistics.mean(shares):.0%}, "
          f"ticks at 50% or more: {sum(s >= 0.5 for s in shares)}/{len(shares)}")


if __name__ == "__main__":
    main()
