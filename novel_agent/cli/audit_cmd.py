"""`novel audit`: the book's continuity findings by subtype, with quotes, and its CED;
`novel audit accept|drop`: what becomes of a tick `audit.mode: hold` stopped."""

from __future__ import annotations

import json
import os
import sys

import click

from novel_agent.audit.book import BookAudit
from novel_agent.audit.held import drop_held
from novel_agent.books.export import parse_range
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
from novel_agent.errors import NovelError, ProjectError
from novel_agent.story.scenes import scene_ticks
from novel_agent.tick.pipeline import land_held
from novel_agent.tick.session import Session
from novel_agent.tick.stages.audit import audit_project


@click.group("audit", invoke_without_command=True)
@click.pass_context
@project_option
@click.option("--range", "scene_range", default=None, metavar="A-B",
              help="Audit only scenes A to B (the scenes before them are still read).")
@click.option("--llm", "use_llm", is_flag=True,
              help="Also ask the configured model's auditor (one call per scene; costs tokens).")
@click.option("--json", "as_json", is_flag=True, help="Print the findings and the CED as JSON.")
@click.option("--wait", type=click.FloatRange(0, None), default=0.0, show_default=True,
              metavar="S", help="With --llm: wait up to S seconds for the project's lock.")
@novel_errors
def audit_cmd(ctx: click.Context, project_spec: str | None, scene_range: str | None,
              use_llm: bool, as_json: bool, wait: float) -> None:
    """Audit the book as it stands (an imported one too) for continuity errors: each
    scene's extraction checked against what the scenes before it established. Prints the
    findings by ConStory-Bench subtype with both quotes, and the book's CED (subtypes with
    an error per 10,000 words). `accept` and `drop` settle a tick held by audit.mode hold.

    \b
    Example:
      novel audit -p harbour
      novel audit -p harbour --range 40-80 --json
      novel audit accept -p harbour
    """
    if ctx.invoked_subcommand is not None:
        return
    project = open_project(project_spec)
    config = load_config(project)
    ticks = scene_ticks(project.scenes_dir)
    if not ticks:
        raise NovelError(f"{project.name} has no scenes to audit")
    first, last = parse_range(scene_range, ticks) if scene_range else (ticks[0], ticks[-1])
    if use_llm:
        with project.locked(wait), Session.open(project, config, os.environ) as session:
            book = audit_project(project, config, first=first, last=last, session=session)
    else:
        book = audit_project(project, config, first=first, last=last)
    if as_json:
        click.echo(json.dumps({"project": project.name, **book.to_dict()}, indent=2,
                              ensure_ascii=False))
        return
    for line in audit_lines(project.name, book, llm=use_llm):
        click.echo(line)


def audit_lines(name: str, book: BookAudit, *, llm: bool = False) -> list[str]:
    """The audit as text: a heading, the findings by subtype, the CED."""
    lines = [f"audit of {name}: scenes {book.first}–{book.last}, {book.words:,} words, "
             f"{'rule checks and the auditor' if llm else 'rule checks'}"]
    for subtype, found in book.subtypes.items():
        lines.append(f"{subtype} ({found[0].category}): {len(found)}")
        for f in found:
            against = f" (scene {f.against_scene})" if f.against_scene else ""
            lines.append(f"  scene {f.scene} [{f.severity}] {f.message}")
            lines.append(f"    \"{f.quote}\"")
            lines.append(f"    vs \"{f.against}\"{against}")
    lines += [f"note: {n}" for n in book.notes]
    if book.discarded:
        lines.append(f"the auditor's findings discarded for want of a quote from the draft: "
                     f"{book.discarded}")
    subtypes = len(book.subtypes)
    lines.append(f"findings: {len(book.findings)} in {subtypes} subtype"
                 f"{'s' if subtypes != 1 else ''}; CED {book.ced:.3f} ({subtypes} / "
                 f"{book.words / 10_000:.2f} × 10,000 words)")
    return lines


@audit_cmd.command("accept")
@project_option
@wait_option
@model_options
@novel_errors
def accept_cmd(project_spec: str | None, wait: float, provider: str | None,
               model_flag: str | None, base_url: str | None) -> None:
    """Land the tick audit.mode hold stopped, as it was held: its draft, plan and
    extraction, with its findings recorded; no model is asked for it again (the
    summaries owed after it are made as after any tick).

    \b
    Example:
      novel audit accept -p harbour
    """
    project = open_project(project_spec)
    config = load_config(project, provider=provider, model=model_flag, base_url=base_url)
    live = LiveLine(sys.stdout)
    with working_session(project, config, wait, live) as session:
        try:
            result = land_held(session)
        finally:
            live.clear()
    for notice in result.notices:
        click.echo(f"  note: {notice}")
    for finding in result.findings:
        click.echo(f"  audit: {finding.line()}")
    rel = result.scene_path.relative_to(project.root.parent)
    click.echo(f"tick {result.tick} of {project.name} accepted: {rel}  {result.words} words  "
               f"\"{result.title}\"")


@audit_cmd.command("drop")
@project_option
@wait_option
@novel_errors
def drop_cmd(project_spec: str | None, wait: float) -> None:
    """Discard the tick audit.mode hold stopped (its draft and findings); the next
    `novel tick` writes that tick again.

    \b
    Example:
      novel audit drop -p harbour
    """
    project = open_project(project_spec)
    with project.locked(wait):
        dropped = drop_held(project.novel_dir)
    if dropped is None:
        raise ProjectError(f"{project.name} has no tick held by the continuity audit",
                           path=str(project.novel_dir))
    click.echo(f"dropped the held tick {dropped.get('tick')} \"{dropped.get('title', '')}\" of "
               f"{project.name}; the next tick writes it again")
