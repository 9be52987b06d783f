"""What each installed embedded model writes: speed and the quality a reader first sees.

    python -m bench.local_quality                    # 5 ticks on each installed model
    python -m bench.local_quality --ticks 3 --model smollm2-135m

For each installed embedded model (registry.py), a new project from the demo's
foundation (scripts/demo.yaml) runs `--ticks` ticks in one session on 127.0.0.1's
llama.cpp, and the script prints:

- seconds per tick (median) and the generation speed (tok/s, from the streamed
  progress: tokens after the first over the seconds since it), the prompt tokens read
  from llama.cpp's prompt cache;
- POVs that are known characters (the scene's POV is a character in memory);
- distinct titles; scenes whose words are within scene_min_words..scene_max_words;
- repeated-trigram share (of each scene's word trigrams, those it already used: a
  model that loops scores high); junk names rejected (names.name_problem's warnings);
- ticks that failed (TickError: nothing committed).

And per tick (issue 21's goals in brackets): seconds [<= 60 on 2 cores], each stage's
prompt tokens evaluated vs taken from llama.cpp's cache, tok/s written, scaffolding
lines in the committed scene [0] (text/cleanup.scaffold_lines), paragraphs copied from
the writer's prompt or an earlier scene, word for word or nearly [0] (as logged in
.novel/log; text.cleanup.drop_copied), premise words present [lighthouse, drowned, map or their kin, in every
scene]; at the end, distinct titles [5/5] and memory entries that are not real names
or questions [0] (characters failing names.person_problem, loops failing
names.loop_problem).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from novel_agent.errors import TickError
from novel_agent.models import registry
from novel_agent.models.base import Progress
from novel_agent.story.memory.read import load_memory
from novel_agent.story.project.folder import create_project
from novel_agent.story.project.recovery import reconciled
from novel_agent.story.scenes import load_scene
from novel_agent.text.cleanup import drop_copied, scaffold_lines
from novel_agent.text.names import loop_problem, name_problem, person_problem
from novel_agent.tick.pipeline import tick
from novel_agent.tick.session import Session
from novel_agent.tick.stages.tools import REJECTED

FOUNDATION = Path(__file__).resolve().parent.parent / "scripts" / "demo.yaml"
PREMISE_WORDS = re.compile(r"\b(?:lighthouse\w*|lamp\w*|drown\w*|maps?|charts?)\b", re.I)
STAGES = ("planner", "writer", "extractor", "summarizer")


def copied_paragraphs(body: str, prompt: str) -> int:
    """Paragraphs of `body` copied from `prompt` (the writer's prompt and the earlier
    scenes), word for word or nearly, or said twice (text.cleanup.drop_copied)."""
    return drop_copied(body, prompt, near=True)[1]


def writer_prompt(project_root: Path, tick_no: int) -> str:
    """The writer's prompt of `tick_no` as its log kept it ("" if none)."""
    path = project_root / ".novel" / "log" / f"tick_{tick_no:03d}_writer.json"
    try:
        return "\n".join(m["content"] for m in json.loads(path.read_text())["messages"])
    except (OSError, KeyError, ValueError):
        return ""


def junk_memory(memory) -> list[str]:
    """Memory entries that are not a real name (characters) or a question (open loops)."""
    bad = [f"character {c.get('name')!r}" for c in memory.characters.values()
           if name_problem(str(c.get("name", ""))) or person_problem(str(c.get("name", "")))]
    bad += [f"loop {loop.get('description')!r}" for loop in memory.loops
            if loop_problem(str(loop.get("description", "")))]
    return bad


def repeated_trigram_share(text: str) -> float:
    """The share of `text`'s word trigrams that already came earlier in it."""
    words = text.lower().split()
    grams = list(zip(words, words[1:], words[2:]))
    return (len(grams) - len(set(grams))) / len(grams) if grams else 0.0


@dataclass
class Speed:
    """Generation speed from progress events: per request, tokens after the first over
    the seconds since it."""

    tokens: int = 0
    seconds: float = 0.0
    _last: Progress | None = None

    def hear(self, p: Progress) -> None:
        last = self._last
        if last is not None and (p.stage != last.stage or p.tokens < last.tokens):
            self._close(last)
        self._last = p

    def _close(self, p: Progress) -> None:
        if p.tokens > 1 and p.generating > 0:
            self.tokens, self.seconds = self.tokens + p.tokens - 1, self.seconds + p.generating

    def rate(self) -> float:
        if self._last is not None:
            self._close(self._last)
            self._last = None
        return self.tokens / self.seconds if self.seconds else 0.0


@dataclass
class Run:
    """What one model's ticks gave."""

    seconds: list[float] = field(default_factory=list)
    scenes: list = field(default_factory=list)
    rejected: int = 0
    failures: list[str] = field(default_factory=list)
    prompt: int = 0
    cached: int = 0
    lines: list[str] = field(default_factory=list)     # one per tick
    scaffolding: int = 0
    copied: int = 0
    premise: int = 0


def run_model(name: str, ticks: int, root: Path) -> tuple[Run, Speed, dict]:
    """`ticks` ticks of a new demo project on embedded model `name`."""
    foundation = yaml.safe_load(FOUNDATION.read_text())
    project = create_project(root / name, {"name": name, **foundation, "preset": "balanced"},
                             config={"llm": {"provider": "local", "local_model": name}})
    config, run, speed = project.config(), Run(), Speed()
    per_tick = [Speed()]
    hear = lambda p: (speed.hear(p), per_tick[-1].hear(p))  # noqa: E731
    with reconciled(project), Session.open(project, config, os.environ, on_progress=hear) as session:
        for n in range(1, ticks + 1):
            started, per_tick[:] = time.monotonic(), [Speed()]
            load = os.getloadavg()[0]
            try:
                result = tick(session)
            except TickError as exc:
                run.failures.append(str(exc)[:160])
                run.lines.append(f"  tick {n}: failed after {time.monotonic() - started:.0f}s "
                                 f"(load {load:.1f}): {str(exc)[:100]}")
                print(run.lines[-1], flush=True)
                continue
            finally:
                run.seconds.append(time.monotonic() - started)
            scene = load_scene(result.scene_path)
            run.scenes.append(scene)
            run.rejected += sum(w.startswith(REJECTED) for w in result.warnings)
            for stage in result.stages:
                run.prompt += stage.prompt_tokens
                run.cached += stage.cached_tokens
            junk = len(scaffold_lines(scene.body))
            copies = copied_paragraphs(scene.body, "\n".join(
                [writer_prompt(project.root, result.tick), *(s.body for s in run.scenes[:-1])]))
            premise = sorted({w.lower() for w in PREMISE_WORDS.findall(scene.body)})
            run.scaffolding, run.copied = run.scaffolding + junk, run.copied + copies
            run.premise += bool(premise)
            stages = "  ".join(f"{s.stage} {s.prompt_tokens - s.cached_tokens}+{s.cached_tokens}c"
                               for s in result.stages)
            run.lines.append(
                f"  tick {result.tick}: {run.seconds[-1]:5.1f}s (load {load:.1f})  "
                f"{per_tick[-1].rate():4.1f} tok/s written  prompt evaluated+cached: {stages}  "
                f"scaffolding {junk}  copied {copies}  premise {','.join(premise) or 'NONE'}  "
                f"{scene.words} words  {scene.title!r}")
            print(run.lines[-1], flush=True)
    return run, speed, {"memory": load_memory(project.memory_dir), "config": config}


def report(name: str, run: Run, speed: Speed, extra: dict) -> list[str]:
    """The lines printed for one model."""
    gen, memory = extra["config"].generation, extra["memory"]
    scenes = run.scenes
    n = max(len(scenes), 1)
    known = sum(memory.find_character(s.pov) is not None for s in scenes if s.pov)
    within = sum(gen.scene_min_words <= s.words <= gen.scene_max_words for s in scenes)
    trigram = statistics.mean(repeated_trigram_share(s.body) for s in scenes) if scenes else 0
    ticks = len(run.seconds)
    return [
        f"{name}: {len(scenes)}/{ticks} ticks committed",
        f"  seconds per tick (median)   {statistics.median(run.seconds):7.1f}",
        f"  generation speed            {speed.rate():7.1f} tok/s",
        f"  prompt tokens from cache    {run.cached / max(run.prompt, 1):7.0%}  "
        f"({run.cached:,} of {run.prompt:,})",
        f"  POVs that are known characters  {known}/{len(scenes)}",
        f"  distinct titles             {len({s.title for s in scenes})}/{len(scenes)}",
        f"  words within {gen.scene_min_words}-{gen.scene_max_words}          {within}/{n}  "
        f"({', '.join(str(s.words) for s in scenes)})",
        f"  repeated-trigram share      {trigram:7.1%}",
        f"  junk names rejected         {run.rejected:7d}",
        f"  scaffolding lines committed {run.scaffolding:7d}",
        f"  paragraphs copied from the prompt {run.copied:3d}",
        f"  scenes with the premise     {run.premise}/{len(scenes)}",
        f"  junk memory entries         {len(junk_memory(memory)):7d}  "
        + "; ".join(junk_memory(memory))[:300],
        *(f"  failed: {f}" for f in run.failures),
        "  titles: " + "; ".join(f"{s.title!r} (pov {s.pov})" for s in scenes),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ticks", type=int, default=5)
    parser.add_argument("--model", nargs="+", default=None, help="names (default: installed)")
    parser.add_argument("--keep", type=Path, default=None, help="keep the projects here")
    args = parser.parse_args()
    cache = registry.default_cache_dir(os.environ)
    names = args.model or [m for m, e in sorted(registry.MODELS.items(),
                                                key=lambda item: item[1].quality)
                           if registry.installed(e, cache_dir=cache)]
    with tempfile.TemporaryDirectory() as folder:
        root = args.keep or Path(folder)
        for name in names:
            before = os.getloadavg()[0]
            run, speed, extra = run_model(name, args.ticks, root)
            print("\n".join(report(name, run, speed, extra)), flush=True)
            print(f"  load average (2 cores shared) {before:.1f} before, "
                  f"{os.getloadavg()[0]:.1f} after", flush=True)


if __name__ == "__main__":
    main()
