"""`novel tick`: write the next scene(s)."""

from __future__ import annotations

import os
import signal
import sys

import click

from novel_agent import crashpoints
from novel_agent.audit import held
from novel_agent.cli.common import (
    load_config,
    model_options,
    novel_errors,
    open_project,
    project_option,
    wait_option,
    working_session,
)
from novel_agent.cli.live import LiveLine
from novel_agent.config.stages import verb
from novel_agent.reports.costs import cost_guard
from novel_agent.story.outline.standing import check_unfinished
from novel_agent.tick.events import StageEvent
from novel_agent.tick.pipeline import TickResult, tick
from novel_agent.tick.runner import run_tick
from novel_agent.tick.session import Session


def stage_line(report: StageEvent) -> str:
    """One progress line: stage, seconds, tokens in → out (and the share of the prompt
    read from the prompt cache); a summarizer failure adds a line saying what stays
    pending and why, and each of its warnings (a summary cut off by the token limit,
    one below summary_min_coverage) a line."""
    line = f"  {verb(report.stage):<9} {report.seconds:6.1f}s"
    if report.calls:
        line += f"  {report.prompt_tokens:>6} → {report.completion_tokens:<5} tokens"
        if report.cached_tokens:
            line += f" ({report.cached_tokens} cached, {report.cached_share:.0%})"
        if report.calls > 1:
            repaired = report.stage in ("planner", "extractor")
            line += f"  ({report.calls} calls{': repaired' if repaired else ''})"
    if report.failure:
        line += f"\n  warning: {report.failure}"
    line += "".join(f"\n  warning: {w}" for w in report.warnings)
    return line


def context_line(writer: dict) -> str:
    """How full the writer's prompt was, and how much of it the prompt cache could reuse."""
    return (f"  context   {writer['tokens']:,}/{writer['budget']:,} tokens "
            f"({writer['usage']:.0%}), level {writer['compaction_level']}, "
            f"prefix shared {writer['prefix_share']:.0%}")


def arm_test_crash(point: str | None) -> None:
    """Test only (the crash matrix): die by SIGKILL at the named point of the tick."""
    if point:
        crashpoints.arm(point, lambda: os.kill(os.getpid(), signal.SIGKILL))


@click.command("tick")
@project_option
@click.option("-n", "count", default=1, show_default=True, type=click.IntRange(1, None),
              help="How many ticks (scenes) to run.")
@click.option("--drop-held", is_flag=True,
              help="Discard a tick held by the continuity audit and write it again.")
@wait_option
@model_options
@novel_errors
def tick_cmd(project_spec: str | None, count: int, drop_held: bool, wait: float,
             provider: str | None, model_flag: str | None, base_url: str | None) -> None:
    """Write the next scene: plan, write, extract, commit.

    With llm.max_cost set, a tick whose estimated cost would take the project's
    spending past it is not started (exit code 4). A tick held by the continuity
    audit (audit.mode hold) is not written again unasked (exit code 5): `novel
    audit accept` lands it, `novel audit drop` or --drop-held discards it. A book
    whose outline's last beat has landed is finished: a tick is refused (exit code
    6) until the outline is extended (`novel outline edit`, `novel outline regen`);
    the tick that lands the last beat says so, and -n stops there.

    \b
    Example:
      novel tick -p harbour -n 3
      novel tick --provider openai --base-url http://localhost:11434/v1 --model llama3.1
    """
    arm_test_crash(os.environ.get("NOVEL_TEST_CRASH_AT"))
    project = open_project(project_spec)
    config = load_config(project, provider=provider, model=model_flag, base_url=base_url)
    live = LiveLine(sys.stdout)
    check_unfinished(project, config.outline.curve)      # (the tick itself checks it again)
    with working_session(project, config, wait, live) as session:
        if drop_held and (dropped := held.drop_held(project.novel_dir)) is not None:
            click.echo(f"dropped the held tick {dropped.get('tick')}")
        click.echo(f"model: {session.model.describe()}")
        if session.limits.warning:
            click.echo(f"warning: {session.limits.warning}")
        for notice in session.take_notes():
            click.echo(f"note: {notice}")
        guard = cost_guard(session)
        for _ in range(count):
            guard()
            click.echo(f"tick {project.tick() + 1} of {project.name}")
            result = _tick_again_if_unusable(session, live)
            for warning in result.warnings:
                click.echo(f"  warning: {warning}")
            for notice in result.notices:
                click.echo(f"  note: {notice}")
            for finding in result.findings:
                click.echo(f"  audit: {finding.line()}")
            if "writer" in result.reports:
                click.echo(context_line(result.reports["writer"]))
            rel = result.scene_path.relative_to(project.root.parent)
            click.echo(f"  → {rel}  {result.words} words  \"{result.title}\"")
            if result.finished:
                click.echo(result.finished)
                break
    click.echo(f"scenes: {project.scenes_dir}")


def _tick_again_if_unusable(session: Session, live: LiveLine) -> TickResult:
    """One tick, run again once if the model's answer could not be used (tick/runner.py:
    the policy `novel run` and `novel fleet` follow too), said in a note."""
    def on_stage(event: StageEvent) -> None:
        live.clear()
        click.echo(stage_line(event))

    def run() -> TickResult:
        try:
            return tick(session, on_stage=on_stage)
        finally:
            live.clear()
    return run_tick(run, on_note=lambda note: click.echo(f"  note: {note}"))
