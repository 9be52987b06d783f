"""`novel context`: build the next tick's prompt and explain it, without calling an LLM."""

from __future__ import annotations

import json

import click

from novel_agent.cli.common import load_config, novel_errors, open_project, project_option
from novel_agent.context.report import render_report
from novel_agent.tick.pipeline import preview
from novel_agent.tick.session import Session


@click.command("context")
@project_option
@click.option("--stage", type=click.Choice(["writer", "planner", "extractor"]), default="writer",
              show_default=True, help="Which stage's prompt to build.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--show-prompt", is_flag=True, help="Print the prompt itself after the report.")
@novel_errors
def context_cmd(project_spec: str | None, stage: str, as_json: bool, show_prompt: bool) -> None:
    """Show what the next tick's prompt holds: budget, sections, items left out and why.

    No LLM is called: the planner's and writer's answers that the writer and
    extractor prompts depend on come from the offline model.

    \b
    Example:
      novel context -p harbour
      novel context --stage planner --json
    """
    project = open_project(project_spec)
    config = load_config(project)
    with Session.open(project, config, stand_in=True) as session:
        built = preview(session, stage)
    if as_json:
        payload = dict(built.report)
        if show_prompt:
            payload["messages"] = built.messages
        click.echo(json.dumps(payload, indent=2, ensure_ascii=False))
        return
    for line in render_report(built.report):
        click.echo(line)
    if stage != "planner":
        click.echo("note: the plan (and prose) in this preview come from the offline model")
    if show_prompt:
        for message in built.messages:
            click.echo(f"\n===== {message['role']} =====")
            click.echo(message["content"])
