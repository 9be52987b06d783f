"""`novel context`: build the next tick's prompt and explain it, without calling an LLM."""

from __future__ import annotations

import json

import click

from novel_agent.cli.common import load_config, novel_errors, open_project, project_option
from novel_agent.config.stages import ticked
from novel_agent.context.report import render_report
from novel_agent.models import provider_for
from novel_agent.tick.pipeline import preview
from novel_agent.tick.session import Session


class StageChoice(click.Choice):
    """The stages every tick runs (config/stages.py), as they are declared when asked."""

    def __init__(self) -> None:
        super().__init__(ticked())

    @property  # type: ignore[override]
    def choices(self) -> tuple[str, ...]:
        return ticked()

    @choices.setter
    def choices(self, value: object) -> None:
        pass


@click.command("context")
@project_option
@click.option("--stage", type=StageChoice(), default="writer", show_default=True,
              help="Which stage's prompt to build: one every tick runs.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--show-prompt", is_flag=True, help="Print the prompt itself after the report.")
@novel_errors
def context_cmd(project_spec: str | None, stage: str, as_json: bool, show_prompt: bool) -> None:
    """Show what the next tick's prompt holds: budget, sections, items left out and why.

    No LLM is called: the plan (and the prose) that the writer's and extractor's
    prompts are built around are stand-ins drawn from the story's memory. On a local
    model the tokens are counted with its own tokenizer (loaded first, a few seconds).

    \b
    Example:
      novel context -p harbour
      novel context --stage planner --json
    """
    project = open_project(project_spec)
    config = load_config(project)
    if provider_for(config).tokenizer is not None and not config.context.encoding:
        click.echo("context: loading the local model's tokenizer, to count tokens as it "
                   "does (a few seconds)…", err=True)
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
        click.echo("note: no model was called: the plan (and prose) this prompt is built "
                   "around are stand-ins drawn from the story's memory, not the next tick's")
    if show_prompt:
        for message in built.messages:
            click.echo(f"\n===== {message['role']} =====")
            click.echo(message["content"])
