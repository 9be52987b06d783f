"""`novel tick`: write the next scene(s)."""

from __future__ import annotations

import os

import click

from ..windows import limits_for
from ..stage_prompts import open_counter
from ..models import get_model
from ..models.recording import RecordingModel
from ..pipeline import StageReport, run_tick
from .common import load_config, model_options, novel_errors, open_project, project_option

STAGE_NAMES = {"planner": "plan", "writer": "write", "extractor": "extract", "commit": "commit",
               "summarizer": "summarize"}


def stage_line(report: StageReport) -> str:
    """One progress line: stage, seconds, tokens in → out (and cached)."""
    line = f"  {STAGE_NAMES.get(report.stage, report.stage):<9} {report.seconds:6.1f}s"
    if report.calls:
        line += f"  {report.prompt_tokens:>6} → {report.completion_tokens:<5} tokens"
        if report.cached_tokens:
            line += f" ({report.cached_tokens} cached)"
        if report.calls > 1:
            repaired = report.stage in ("planner", "extractor")
            line += f"  ({report.calls} calls{': repaired' if repaired else ''})"
    return line


@click.command("tick")
@project_option
@click.option("-n", "count", default=1, show_default=True, type=click.IntRange(1, None),
              help="How many ticks (scenes) to run.")
@model_options
@novel_errors
def tick_cmd(project_spec: str | None, count: int, provider: str | None, model_flag: str | None,
             base_url: str | None) -> None:
    """Write the next scene: plan, write, extract, commit.

    \b
    Example:
      novel tick -p harbour -n 3
      novel tick --provider openai --base-url http://localhost:11434/v1 --model llama3.1
    """
    project = open_project(project_spec)
    config = load_config(project, provider=provider, model=model_flag, base_url=base_url)
    with project:
        model = get_model(config, os.environ)
        click.echo(f"model: {model.describe()}")
        warning = limits_for(config).warning
        if warning:
            click.echo(f"warning: {warning}")
        counter = open_counter(project, config)
        model = RecordingModel(model)
        for _ in range(count):
            click.echo(f"tick {project.tick() + 1} of {project.name}")
            try:
                result = run_tick(project, config, model, counter=counter,
                                  on_stage=lambda r: click.echo(stage_line(r)))
            finally:
                counter.store.flush()
                counter.store.log_usage(model.drain())
            writer = result.reports.get("writer", {})
            if writer:
                click.echo(f"  context   {writer['tokens']:,}/{writer['budget']:,} tokens "
                           f"({writer['usage']:.0%}), level {writer['compaction_level']}, "
                           f"prefix shared {writer['prefix_share']:.0%}")
            rel = result.scene_path.relative_to(project.root.parent)
            click.echo(f"  → {rel}  {result.words} words  \"{result.title}\"")
    click.echo(f"scenes: {project.scenes_dir}")
