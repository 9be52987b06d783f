"""What every command shares: finding the project, building its config, errors."""

from __future__ import annotations

import functools
import os
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import click

from novel_agent.cli.live import LiveLine
from novel_agent.config.providers import is_provider, provider_names
from novel_agent.config.settings import Config
from novel_agent.errors import ConfigError, FileFormatError, NovelError, ProjectError
from novel_agent.files import read_bytes
from novel_agent.history.hooks import opened
from novel_agent.storage import explain
from novel_agent.story.project.folder import Project, find_project, projects_dir, remember_project
from novel_agent.tick.session import Session

project_option = click.option(
    "-p", "--project", "project_spec", metavar="PROJECT",
    help="A project folder or a name under the projects folder (default: the project here, "
         "else the only one under projects/, else the one last used there).")

wait_option = click.option(
    "--wait", type=click.FloatRange(0, None), default=0.0, show_default=True, metavar="S",
    help="Wait up to S seconds for another process (a running `novel run`) to release the "
         "project.")


class ProviderName(click.ParamType):
    """A provider's name: auto, a built-in one or one an installed package registers
    (looked up when a value is given or help is shown, not when the CLI loads)."""

    name = "provider"

    def get_metavar(self, param: click.Parameter, ctx: click.Context) -> str:
        return "[" + "|".join(provider_names()) + "]"

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> str:
        if not is_provider(str(value)):
            self.fail(f"{value!r} is not one of {', '.join(map(repr, provider_names()))}.",
                      param, ctx)
        return str(value)


def model_options(fn: Callable) -> Callable:
    """--provider/--model/--base-url, the flag layer of the configuration."""
    fn = click.option("--base-url", default=None,
                      help="An OpenAI-compatible endpoint (anthropic: the Messages API's).")(fn)
    fn = click.option("--model", "model_flag", default=None, help="Model name (llm.model).")(fn)
    fn = click.option("--provider", default=None, type=ProviderName(),
                      help="Which model answers (llm.provider).")(fn)
    return fn


def flags(provider: str | None = None, model: str | None = None,
          base_url: str | None = None) -> dict[str, Any]:
    return {"llm.provider": provider, "llm.model": model, "llm.base_url": base_url}


def open_project(spec: str | None) -> Project:
    """The project `-p` names (see project.find_project), reconciled with its files when
    no other process holds it: an interrupted commit finished, temp files removed, the
    tick counter re-counted, each said in one line (on stderr)."""
    project = find_project(spec, Path.cwd(), os.environ)
    if project.chosen:
        click.echo(project.chosen, err=True)
    remember_project(project, projects_dir(Path.cwd(), os.environ))
    try:
        with opened(project) as notices:
            pass
    except ProjectError:
        return project    # busy (a tick in flight) or read-only: read it as it is
    for notice in notices:
        click.echo(f"note: {notice}", err=True)
    return project


def load_config(project: Project, **flag_values: Any) -> Config:
    return project.config(env=os.environ, flags=flags(**flag_values))


@contextmanager
def working_session(project: Project, config: Config, wait: float, live: LiveLine,
                    **options: Any) -> Iterator[Session]:
    """The project locked (waiting up to `wait` s) and a session open on it, a local
    model's progress shown on `live`: how tick, summarize and import begin."""
    with project.locked(wait), Session.open(project, config, os.environ,
                                            on_progress=live.update, **options) as session:
        yield session


T = TypeVar("T")


def edit_until_valid(path: Path, save: Callable[[str], T], name: str) -> T | None:
    """Open the file at `path` in $EDITOR until `save(text)` takes the edit: an invalid one
    (`save` raises ConfigError or FileFormatError naming the line, and writes nothing) is
    said on stderr and the user asked to edit it again. Returns what `save` gave, or None
    when the text came back unchanged ("NAME: unchanged"); declined, the error is "NAME
    left as it was"."""
    saved = read_bytes(path).decode("utf-8")
    text = saved
    while True:
        edited = click.edit(text, extension=path.suffix or ".txt")
        if edited is None or edited == saved:
            click.echo(f"{name}: unchanged")
            return None
        try:
            return save(edited)
        except (ConfigError, FileFormatError) as exc:
            click.echo(f"not saved: {exc}", err=True)
            if not click.confirm("edit again?", default=True):
                raise click.ClickException(f"{name} left as it was") from None
            text = edited


BOOK_FOLDERS = {"scenes", "plans", "memory", "summaries"}   # (lore: its commands say their own)


def with_doctor(exc: NovelError) -> str:
    """The error's line; for a file of a book that cannot be read, with where the remedy
    is (`novel doctor --fix` brings back its last good copy from the history)."""
    text, file = str(exc), getattr(exc, "file", None)
    if isinstance(exc, FileFormatError) and file and "doctor" not in text and \
            BOOK_FOLDERS & set(Path(file).parts[-3:-1]):
        text += " (`novel doctor` lists what is damaged; `--fix` brings back a good copy)"
    return text


def novel_errors(fn: Callable) -> Callable:
    """Turn a NovelError (or what the disk said, see storage.explain) into a one-line
    ClickException, exiting with the error's `exit_code` (1, or 4 for a cost ceiling);
    no traceback. A reader that went away (`novel status | head -1`) is not the disk:
    the BrokenPipeError goes on to cli.main."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except BrokenPipeError:
            raise
        except NovelError as exc:
            class Failed(click.ClickException):
                exit_code = exc.exit_code      # Click reads it from the class (a ClassVar)

            raise Failed(with_doctor(exc)) from None
        except (OSError, sqlite3.Error) as exc:   # the disk: full, read-only, ...
            raise click.ClickException(str(explain(exc))) from None

    return wrapper
