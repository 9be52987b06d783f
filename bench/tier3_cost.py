"""What tier 3 (arc + checkpoint + overall summaries) costs as a book grows.

Runs an offline book in a temporary folder and prints, at the ticks asked for,
the writer prompt's size and the tier-3 tokens in it, what the next tick's tier 3
will hold once that tick's checkpoint is made, the budget they live in, the shape
of the summary tree, and the tokens the summarizer has spent so far.

    python -m bench.tier3_cost                       # ticks 10, 100, 1000; balanced preset
    python -m bench.tier3_cost --at 10 100 --preset aggressive --share 0.05
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

from novel_agent.context.tier3 import doc_cost, select_tier3, tier3_budget
from novel_agent.models.limits import limits_for
from novel_agent.story.project.folder import create_project
from novel_agent.story.project.recovery import reconciled
from novel_agent.story.summaries import load_tree
from novel_agent.tick.pipeline import tick as run_tick
from novel_agent.tick.session import Session, counter_for


def writer_tier3_tokens(result) -> int | None:
    """Tier-3 tokens the writer's prompt really held, from the tick's context report."""
    for section in (result.reports.get("writer") or {}).get("sections", []):
        if section.get("name") == "tier3":
            return int(section.get("tokens", 0))
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--at", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--preset", default="balanced")
    parser.add_argument("--share", type=float, default=None, help="context.tier3_share")
    parser.add_argument("--interval", type=int, default=None,
                        help="generation.checkpoint_summary_interval")
    args = parser.parse_args()
    settings: dict = {"llm": {"provider": "offline"}}
    if args.share is not None:
        settings["context"] = {"tier3_share": args.share}
    if args.interval is not None:
        settings["generation"] = {"checkpoint_summary_interval": args.interval}
    with tempfile.TemporaryDirectory() as folder:
        project = create_project(Path(folder) / "bench", {
            "name": "bench", "premise": "A lighthouse keeper finds a drowned man's map.",
            "protagonist": "Mara Quill", "preset": args.preset}, config=settings)
        config = project.config()
        count, budget = counter_for(config).count, tier3_budget(config, limits_for(config))
        print(f"preset {args.preset}: checkpoint every "
              f"{config.generation.checkpoint_summary_interval} ticks, tier-3 budget {budget} "
              f"tokens ({config.context.tier3_share:.0%} of the writer's)")
        print(f"{'tick':>6} {'writer':>7} {'tier 3':>7} {'next':>6} {'budget':>6}  "
              f"{'next tick tier 3 holds':<24} {'summary tree':<28} {'summarizer so far':>18} "
              f"{'secs':>5}")
        spent, started = [0, 0], time.monotonic()
        now = lambda: datetime(2025, 1, 1, tzinfo=UTC)  # noqa: E731
        with reconciled(project), Session.open(project, config, now=now) as session:
            for tick in range(1, max(args.at) + 1):
                result = run_tick(session)
                if result.summary:
                    spent[0] += result.summary.prompt_tokens
                    spent[1] += result.summary.completion_tokens
                if tick in args.at:
                    print(_row(project, config, result, budget, count, spent, started))


def _row(project, config, result, budget, count, spent, started) -> str:
    """tick; its writer prompt and the tier-3 tokens in it; what the next tick's tier 3
    will hold (after this tick's summaries); the whole tree; summarizer tokens in → out."""
    tree = load_tree(project.summaries_dir)
    chosen = select_tier3(tree, budget, count)
    everything = [*tree.docs.values(), *([tree.overall] if tree.overall else [])]
    in_prompt = writer_tier3_tokens(result)
    writer = (result.reports.get("writer") or {}).get("tokens", 0)
    spent_text = f"{spent[0]:,} → {spent[1]:,}"
    return (f"{result.tick:>6} {writer:>7,} {in_prompt if in_prompt is not None else '?':>7,} "
            f"{sum(doc_cost(d, count) for d in chosen):>6,} {budget:>6,}  "
            f"{_shape(chosen):<24} {_shape(everything):<28} {spent_text:>18} "
            f"{time.monotonic() - started:>5.0f}")


def _shape(docs) -> str:
    """How many docs of each level: "3×L2 13×L1 2×L0 1×overall"."""
    levels = Counter("overall" if d.kind == "overall" else f"L{d.level}" for d in docs)
    order = sorted(levels, key=lambda k: (k == "overall", -int(k[1:]) if k != "overall" else 0))
    return " ".join(f"{levels[k]}×{k}" for k in order)


if __name__ == "__main__":
    main()
