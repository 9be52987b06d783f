"""Benchmark: does the writer get the old fact it needs? (issue: remembering the right old thing)

    python -m bench.continuity               # 500 scenes, 50 planted facts; index at 10,000
    python -m bench.continuity --quick       # 300 scenes, 20 facts; index at 2,000

A synthetic story on disk (tests/support/planted.py): scenes with a cast of twelve and
twenty-five places, one or two ordinary facts per scene, and facts planted in
the first half, each needed again by the next scene's intention (which names the
fact's person and place). At a writer budget of 3,000 tokens, prints the share of
needed facts that reach the writer's prompt (the fact's text, or the scene that
established it in full) for:

    engine           this engine: tiers, retrieval (BM25 + names + loops), lore
    sliding window   the last scenes in full text, as many as fit the budget
    summaries only   the last scenes' summary bullets, as many as fit (the seed strategy)

all measured in the same run. Then builds the index of a 10,000-scene story and
prints its build time, its size, and the median time of one retrieval.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from novel_agent.context.builders import scene_full, scene_summary
from novel_agent.index.recall import WriterRecall
from novel_agent.index.sync import rebuild
from novel_agent.story.memory.read import load_memory
from novel_agent.story.project.folder import create_project
from novel_agent.story.scenes import SceneReader
from novel_agent.text.tokens import TokenCounter
from novel_agent.tick.pipeline import preview
from novel_agent.tick.session import Session
from tests.support.planted import plan_answer, plant, write_planted
from tests.support.scripted import ScriptedModel

BUDGET = 3000
OUTPUT, MARGIN = 700, 256


def new_project(root: Path, name: str):
    return create_project(root / name, {"name": name, "premise": "An island keeps its secrets.",
                                        "protagonist": "Mara Quill", "preset": "balanced"},
                          config={"llm": {"provider": "offline"},
                                  "context": {"max_prompt_tokens": BUDGET + OUTPUT + MARGIN}})


def engine_share(project, probes) -> tuple[float, list[str]]:
    """The share of probes whose fact reached the engine's writer prompt."""
    model = ScriptedModel()
    for probe in probes:
        model.add("planner", plan_answer(probe.plan))
    hits, missed = 0, []
    with Session.open(project, project.config(), make_model=lambda: model) as session:
        assert session.budget("writer").tokens == BUDGET, session.budget("writer")
        for probe in probes:
            built = preview(session, "writer")
            prompt = "\n".join(m["content"] for m in built.messages)
            full = next(s["items"] for s in built.report["sections"] if s["name"] == "recent_full")
            if probe.fact in prompt or f"scene_{probe.planted_at:03d}" in full:
                hits += 1
            else:
                missed.append(probe.fact)
    return hits / len(probes), missed


def baseline_share(project, probes, last: int, form) -> float:
    """The share reached by a prompt of the newest scenes in `form`, as many as fit."""
    counter = TokenCounter("gpt-4o-mini")
    scenes = SceneReader(project.scenes_dir)
    room, held = BUDGET - 400, set()         # instructions, bible and intention take ~400
    for tick in range(last, 0, -1):
        cost = counter.count(form(scenes(tick)))
        if cost > room:
            break
        room -= cost
        held.add(tick)
    text = "\n".join(form(scenes(t)) for t in held)
    return sum(p.fact in text or (form is scene_full and p.planted_at in held)
               for p in probes) / len(probes)


def index_at_scale(root: Path, scenes: int, tries: int = 20) -> tuple[float, float, float]:
    """(seconds to build the index, its size in MB, median seconds of one retrieval)."""
    project = new_project(root, f"scale{scenes}")
    probes = plant(scenes, 40, seed=3)
    write_planted(project, scenes, probes)
    started = time.perf_counter()
    rebuild(project)
    built = time.perf_counter() - started
    size = sum(p.stat().st_size for p in project.novel_dir.glob("index.db*")) / 1e6
    memory = load_memory(project.memory_dir)
    times = []
    with Session.open(project, project.config(), stand_in=True) as session:
        relevance = session.config.context.relevance
        for probe in probes[:tries]:
            recall = WriterRecall(session.index, probe.plan, memory, "", scenes + 1, relevance)
            started = time.perf_counter()
            recall(set(range(scenes - 8, scenes + 1)), set(range(scenes - 2, scenes + 1)))
            times.append(time.perf_counter() - started)
    return built, size, statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smaller story and index")
    parser.add_argument("--scenes", type=int, nargs=3, metavar=("SCENES", "FACTS", "INDEX"),
                        default=None, help="the story's scenes, its planted facts, the "
                        "index's scenes (the tests: 40 4 100)")
    args = parser.parse_args()
    scenes, facts, scale = args.scenes or ((300, 20, 2000) if args.quick else (500, 50, 10_000))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        project = new_project(root, "continuity")
        probes = plant(scenes, facts)
        write_planted(project, scenes, probes)
        started = time.perf_counter()
        engine, missed = engine_share(project, probes)
        seconds = time.perf_counter() - started
        window = baseline_share(project, probes, scenes, scene_full)
        summaries = baseline_share(project, probes, scenes, scene_summary)
        print(f"continuity: {scenes} scenes, {facts} planted facts, writer budget {BUDGET:,} "
              "tokens")
        print(f"  {'strategy':<16} needed facts in the writer's prompt")
        print(f"  {'engine':<16} {engine:.2f}   ({seconds / facts * 1000:.0f} ms per prompt)")
        print(f"  {'sliding window':<16} {window:.2f}")
        print(f"  {'summaries only':<16} {summaries:.2f}")
        for fact in missed[:5]:
            print(f"  missed: {fact}")
        built, size, median = index_at_scale(root, scale)
        print(f"index at {scale:,} scenes: built in {built:.1f}s, {size:.1f} MB; "
              f"median retrieval {median * 1000:.1f} ms (goal < 20 ms)")


if __name__ == "__main__":
    main()
