"""Benchmark: `novel import` of a 100,000-word manuscript on the offline model.

    python -m bench.import_100k                 # 25 chapters × 10 scenes × 400 words
    python -m bench.import_100k --words 20000   # a smaller book

Writes a manuscript of story_factory prose (chapter headings, `* * *` between
scenes), imports it into a fresh offline project (balanced preset,
scene_max_words 400) through the library, as `novel import` does, and prints
the time taken and the tokens the calls would send to a real model: the sum of
the usage rows' prompt and completion tokens per stage (the offline model
counts a prompt as characters / 4), beside the prompt logs' token counts (the
configured model's tokenizer, tiktoken), which are what a real model is sent.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import tempfile
import time
from pathlib import Path

from novel_agent.books.importer import import_manuscript
from novel_agent.books.split import load_manuscript
from novel_agent.models.offline import OfflineModel
from novel_agent.story.project.folder import create_project
from novel_agent.story.project.recovery import reconciled
from novel_agent.tick.session import Session
from tests.support import story_factory as sf


def manuscript(path: Path, words: int, per_scene: int = 400, per_chapter: int = 10) -> Path:
    scenes = words // per_scene
    parts = []
    for n in range(scenes):
        if n % per_chapter == 0:
            parts.append(f"# Chapter {n // per_chapter + 1}")
        elif parts:
            parts.append("* * *")
        parts.append(sf.prose(per_scene, n))
    path.write_text("\n\n".join(parts) + "\n", encoding="utf-8")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--words", type=int, default=100_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        project = create_project(Path(tmp) / "book", {
            "name": "book", "premise": "A lighthouse keeper finds a drowned man's map.",
            "protagonist": "Mara Quill", "preset": "balanced"},
            config={"llm": {"provider": "offline"}})
        source = manuscript(Path(tmp) / "book.md", args.words)
        started = time.perf_counter()
        m = load_manuscript(source, "auto", project.config().generation.scene_max_words)
        with reconciled(project), Session.open(project, project.config(),
                                   make_model=lambda: OfflineModel()) as session:
            result = import_manuscript(session, m)
        seconds = time.perf_counter() - started
        with sqlite3.connect(project.index_db) as db:
            rows = db.execute("SELECT stage, COUNT(*), SUM(prompt_tokens), "
                              "SUM(completion_tokens) FROM usage GROUP BY stage").fetchall()
        logged = {"extractor": 0, "summarizer": 0}
        for path in project.log_dir.glob("*.json"):
            stage = "extractor" if path.stem.endswith("_extractor") else "summarizer"
            logged[stage] += json.loads(path.read_text())["tokens"]
        kinds = sorted(p.stem.split("_")[0] for p in project.summaries_dir.glob("*.md"))
        print(f"{len(m.pieces)} pieces, {result.words:,} words, ticks {result.ticks[0]}–"
              f"{result.ticks[-1]}, {result.characters} characters, "
              f"summary files: " + ", ".join(f"{kinds.count(k)} {k}" for k in sorted(set(kinds))))
        print(f"time: {seconds:.1f} s ({seconds / len(m.pieces) * 1000:.0f} ms a piece)")
        print("usage rows (offline counts: characters / 4):")
        for stage, calls, prompt, completion in rows:
            print(f"  {stage:<10} {calls:>4} calls  {prompt:>10,} prompt  {completion:>8,} "
                  "completion")
        total = sum(r[2] + r[3] for r in rows)
        print(f"  total {total:,} tokens")
        print("prompt logs (tiktoken, prompts only): " + ", ".join(
            f"{stage} {n:,}" for stage, n in logged.items()) + f"; total {sum(logged.values()):,}")


if __name__ == "__main__":
    main()
