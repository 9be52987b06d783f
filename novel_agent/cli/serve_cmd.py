"""`novel serve`: the book and its daemon in a browser (novel_agent.web)."""

from __future__ import annotations

import os
import secrets
import shutil
import sys
import webbrowser
from pathlib import Path

import click

from novel_agent.cli.common import novel_errors, project_option
from novel_agent.errors import ProjectError
from novel_agent.story.project.folder import find_project, projects_dir
from novel_agent.web.site import Site, is_loopback


def novel_command() -> tuple[str, ...]:
    """How this installation starts `novel run`: the `novel` script beside this Python."""
    beside = Path(sys.executable).parent / "novel"
    found = str(beside) if beside.is_file() else shutil.which("novel")
    if not found:
        raise ProjectError("cannot find the `novel` command to start the daemon with "
                           "(is novel_agent installed in this environment?)")
    return (found,)


@click.command("serve")
@project_option
@click.option("--projects", "projects_folder", type=click.Path(file_okay=False, path_type=Path),
              default=None, metavar="DIR",
              help="Serve every project under DIR (default: the projects folder).")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="The address to listen on; any but loopback needs a token.")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True)
@click.option("--token", default=None, metavar="TOKEN",
              help="Require this token (made up and printed when --host is not loopback).")
@click.option("--open", "open_browser", is_flag=True, help="Open the library in a browser.")
@novel_errors
def serve_cmd(project_spec: str | None, projects_folder: Path | None, host: str, port: int,
              token: str | None, open_browser: bool) -> None:
    """Serve the book, its daemon, lore, memory, context and numbers in a browser.

    The pages read and write the same files as the commands. It listens on
    127.0.0.1 unless --host says otherwise; then every request needs the token
    it prints (or --token). Ctrl-C stops the server, not a daemon it started.

    \b
    Example:
      novel serve                        # every project under projects/
      novel serve -p harbour --open
      novel serve --host 0.0.0.0 --port 8080
    """
    import uvicorn

    from novel_agent.web.app import create_app

    if project_spec and projects_folder:
        raise click.UsageError("give -p PROJECT or --projects DIR, not both")
    single = find_project(project_spec, Path.cwd(), os.environ) if project_spec else None
    folder = None if single else (projects_folder or projects_dir(Path.cwd(), os.environ))
    if folder is not None and not folder.is_dir():
        raise ProjectError(f"no projects folder {folder}: create a project with `novel new "
                           "NAME`, or give --projects DIR", path=str(folder))
    if not token and not is_loopback(host):
        token = secrets.token_urlsafe(24)
    site = Site(projects_dir=folder, single=single, env=dict(os.environ),
                novel_command=novel_command(), token=token or "",
                csrf=secrets.token_urlsafe(32))
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{'127.0.0.1' if host in ('0.0.0.0', '::') else shown}:{port}/"
    what = single.name if single else f"the projects under {folder}"
    click.echo(f"serving {what} at {url}{'?token=' + token if token else ''}  (Ctrl-C stops)")
    if open_browser:
        webbrowser.open(url + (f"?token={token}" if token else ""))
    server = uvicorn.Server(uvicorn.Config(create_app(site, host), host=host, port=port,
                                           log_level="warning", timeout_graceful_shutdown=2))
    site.stopping = lambda: server.should_exit      # open live feeds end, Ctrl-C is clean
    server.run()
