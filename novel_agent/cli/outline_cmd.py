"""`novel outline [show|edit|regen]`: the book's outline, in outline/outline.yaml."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import click

from novel_agent.cli.common import (
    edit_until_valid,
    load_config,
    model_options,
    novel_errors,
    open_project,
    project_option,
    wait_option,
)
from novel_agent.cli.live import LiveLine
from novel_agent.config.settings import Config
from novel_agent.errors import ProjectError
from novel_agent.history.hooks import after_outline, opened
from novel_agent.revision.outline_edits import no_outline, save_outline_text
from novel_agent.story.outline.curves import fill_tensions
from novel_agent.story.outline.file import Outline, load_outline, to_data
from novel_agent.story.project.folder import Project
from novel_agent.tick.session import Session
from novel_agent.tick.stages.outline import (
    OnStep,
    OutlineStep,
    check_start,
    new_outline,
    rewrite_outline,
)


@click.group("outline", invoke_without_command=True)
@click.pass_context
@project_option
@click.option("--force", is_flag=True,
              help="Make a new outline in place of the one there is (the history keeps it).")
@wait_option
@model_options
@novel_errors
def outline_group(ctx: click.Context, project_spec: str | None, force: bool, wait: float,
                  provider: str | None, model_flag: str | None, base_url: str | None) -> None:
    """Make the book's outline with the planner's model, one level at a time: the arc
    and its ending, the acts, each act's chapters, each chapter's beats (sizes and
    tension curve: the outline settings). It is written to outline/outline.yaml, plain
    YAML to edit; a book without one is written as before.

    \b
    Example:
      novel outline -p harbour
      novel outline show -p harbour
      novel outline regen --from 3 -p harbour
    """
    if ctx.invoked_subcommand is not None:
        return
    project = open_project(project_spec)
    if project.outline_file.exists() and not force:
        raise ProjectError(f"{project.name} has an outline ({shown(project)}): `novel outline "
                           "edit` changes it, `regen --from N` rewrites it from chapter N, "
                           "--force makes a new one", path=str(project.outline_file))
    config = load_config(project, provider=provider, model=model_flag, base_url=base_url)
    with outline_session(project, config, wait) as (session, on_step):
        outline = new_outline(session, on_step=on_step)
        after_outline(project, f"outline made: {outline.describe()}", now=session.now)
    click.echo(f"wrote {shown(project)}: {outline.describe()}")


@contextmanager
def outline_session(project: Project, config: Config,
                    wait: float) -> Iterator[tuple[Session, OnStep]]:
    """The project opened and locked (waiting up to `wait` s), a session on it, and the
    function that prints each level's line (a local model's progress drawn meanwhile)."""
    live = LiveLine(sys.stdout)

    def on_step(step: OutlineStep) -> None:
        live.clear()
        click.echo(step_line(step))

    with opened(project, wait), Session.open(project, config, os.environ,
                                             on_progress=live.update) as session:
        click.echo(f"model: {session.model.describe()}")
        try:
            yield session, on_step
        finally:
            live.clear()


def step_line(step: OutlineStep) -> str:
    """One level made: how many parts, calls, seconds and tokens."""
    nouns = {"arc": "the arc and its ending"}
    made = nouns.get(step.level) or f"{step.made} {step.level if step.made != 1 else step.level[:-1]}"
    calls = f"{step.calls} call{'s' if step.calls != 1 else ''}"
    line = (f"  {step.level:<9} {made:<24} {calls:<9} {step.seconds:5.1f}s  "
            f"{step.prompt_tokens:>7,} → {step.completion_tokens:<6,} tokens")
    return line + "".join(f"\n  warning: {w}" for w in step.warnings)


def shown(project: Project) -> str:
    """The outline's file as the user names it (from the projects folder)."""
    return str(project.outline_file.relative_to(project.root.parent))


def existing(project: Project) -> Outline:
    """The project's outline, or a ProjectError saying how to make one."""
    outline = load_outline(project.outline_file)
    if outline is None:
        raise no_outline(project)
    return outline


@outline_group.command("show")
@project_option
@click.option("--json", "as_json", is_flag=True, help="Print the outline as JSON.")
@novel_errors
def show_cmd(project_spec: str | None, as_json: bool) -> None:
    """Print the outline as a tree: the arc and its ending, each act, its chapters with
    their target length in scenes, their beats with their target tension; parts marked
    locked say so. A tension the file leaves out is the curve's (~).

    \b
    Example:
      novel outline show -p harbour
      novel outline show -p harbour --json
    """
    project = open_project(project_spec)
    outline, curve = existing(project), load_config(project).outline.curve
    if as_json:
        click.echo(json.dumps({"project": project.name, "curve": curve,
                               "planned_scenes": outline.planned_scenes(),
                               **to_data(fill_tensions(outline, curve))},
                              indent=2, ensure_ascii=False))
        return
    for line in tree_lines(project.name, outline, curve):
        click.echo(line)


def tree_lines(name: str, outline: Outline, curve: str) -> list[str]:
    """The outline as `novel outline show` prints it."""
    filled = {b.id: b.tension for b in fill_tensions(outline, curve).beats()}
    mark = lambda part: "  [locked]" if part.locked else ""  # noqa: E731
    lines = [f"{name}: {outline.describe()} (curve {curve})",
             f"arc: {outline.arc.summary}{mark(outline.arc)}",
             *([f"question: {outline.arc.question}"] if outline.arc.question else []),
             f"ending: {outline.arc.ending}"]
    for number, act in enumerate(outline.acts, 1):
        lines += ["", f"act {number}  {act.name}{mark(act)}"]
        lines += [f"  {act.summary}"] if act.summary else []
        for chapter in act.chapters:
            lines.append(f"  chapter {chapter.number}  {chapter.title}  ({chapter.scenes} "
                         f"scene{'s' if chapter.scenes != 1 else ''}){mark(chapter)}")
            lines += [f"    {chapter.purpose}"] if chapter.purpose else []
            lines += [f"    {b.id:<5} tension {'' if b.tension is not None else '~'}"
                      f"{filled[b.id]:<2} {b.what}{mark(b)}" for b in chapter.beats]
    return lines


@outline_group.command("edit")
@project_option
@wait_option
@novel_errors
def edit_cmd(project_spec: str | None, wait: float) -> None:
    """Open outline/outline.yaml in $EDITOR; it is saved only once it validates (on an
    error, which names the line and the key, you are asked to reopen it), and the change
    is an entry of the book's history.

    \b
    Example:
      EDITOR=nano novel outline edit -p harbour
    """
    project = open_project(project_spec)
    path = project.outline_file
    with opened(project, wait):
        if not path.is_file():          # (one that does not validate is opened: to mend it)
            raise no_outline(project)
        if (outline := edit_until_valid(path, lambda text: save_outline_text(project, text),
                                        shown(project))) is not None:
            click.echo(f"saved {shown(project)}: {outline.describe()}")


@outline_group.command("regen")
@project_option
@click.option("--from", "start", type=click.IntRange(1, None), required=True,
              metavar="CHAPTER", help="The first chapter to rewrite.")
@wait_option
@model_options
@novel_errors
def regen_cmd(project_spec: str | None, start: int, wait: float, provider: str | None,
              model_flag: str | None, base_url: str | None) -> None:
    """Rewrite the outline's chapters from CHAPTER on (titles, purposes, beats) with the
    planner's model, keeping the chapters before it, every part marked `locked: true`
    (a locked act or chapter keeps all it holds) and every beat the book's scenes have
    landed (done or partly). The change is an entry of the history.

    \b
    Example:
      novel outline regen --from 3 -p harbour
    """
    project = open_project(project_spec)
    config = load_config(project, provider=provider, model=model_flag, base_url=base_url)
    check_start(existing(project), start)
    with outline_session(project, config, wait) as (session, on_step):
        done = rewrite_outline(session, start, on_step=on_step)
        if done.after != done.before:
            after_outline(project, f"outline rewritten from chapter {start}: chapters "
                                   f"{', '.join(map(str, done.chapters))}", now=session.now)
    later = [c.number for c in done.before.chapters() if c.number >= start]
    span = f"chapter {start}" if len(later) == 1 else f"chapters {start}–{later[-1]}"
    if not done.chapters:
        click.echo(f"nothing rewritten: {span} {'is' if len(later) == 1 else 'are'} locked")
        return
    kept = [n for n in later if n not in done.chapters]
    locked = [n for n in kept if _locked(done.before, n)]
    why = [f"{', '.join(map(str, numbers))} ({said})" for numbers, said in (
        (locked, "locked"), ([n for n in kept if n not in locked], "landed")) if numbers]
    click.echo(f"rewrote {span} in {shown(project)}"
               + (f", but for {'; '.join(why)}" if why else "")
               + (": the model wrote them as they were" if done.after == done.before else ""))


def _locked(outline: Outline, number: int) -> bool:
    """Whether chapter `number` is locked (or in a locked act)."""
    chapter, act = outline.chapter(number), outline.act_of(number)
    return bool(chapter and chapter.locked or act and act.locked)
