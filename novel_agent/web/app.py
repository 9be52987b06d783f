"""The web app of `novel serve`: `create_app(site)` and its routes, thin over pages.py,
edits.py and live.py.

Every URL names a project by name (`/p/NAME/...`, looked up in the Site); a form
is checked for the server's secret (security.py) before anything is written; a
NovelError is a 4xx page (or an htmx fragment) with its one line when the request
was wrong, a 500 when the project's files or the disk were (SERVER_FAULTS), and
anything unexpected a 500 with one line, never a traceback.
"""

from __future__ import annotations

import asyncio
from html import escape
from typing import Any
from urllib.parse import quote

from starlette.applications import Starlette
from starlette.convertors import PathConvertor, StringConvertor, register_url_convertor
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from novel_agent.books.export import FORMATS, export
from novel_agent.config.stages import ticked
from novel_agent.config.values import interval_seconds
from novel_agent.daemon.heartbeat import read_heartbeat
from novel_agent.errors import (
    LockError,
    MissingExtraError,
    NovelError,
    ProjectError,
)
from novel_agent.files import inside
from novel_agent.storage import explain
from novel_agent.story.project.folder import Project
from novel_agent.story.project.recovery import rebuild_state
from novel_agent.story.scenes import Scene, last_tick, scene_ticks
from novel_agent.web.common import (
    HERE,
    SERVER_FAULTS,
    NotFound,
    form_of,
    int_param,
    project_of,
    render,
    templates,
)
from novel_agent.web.edits import add_lore, edit_lore, save_steer
from novel_agent.web.live import Daemons, feed, log_tail
from novel_agent.web.pages import (
    SceneProblem,
    book_page,
    context_page,
    daemon_view,
    library_row,
    lore_file_text,
    lore_page,
    memory_page,
    numbers_page,
    readable_scenes,
    scene_page,
    steer_page,
)
from novel_agent.web.pages import stats_png as make_stats_png
from novel_agent.web.room_edit import routes as edit_routes
from novel_agent.web.room_history import routes as history_routes
from novel_agent.web.room_outline import routes as outline_routes
from novel_agent.web.security import Guard
from novel_agent.web.site import Site, is_loopback


class Name(StringConvertor):
    """A name in a URL's path (a project's, a lore file's), matched as Starlette's `str` and
    percent-encoded when url_for makes a link, so that a name with '#', '?' or a space
    links to itself: the one place a link is encoded."""

    def to_string(self, value: str) -> str:
        return quote(super().to_string(value), safe="")


class File(PathConvertor):
    """A file's path under a folder (export/), encoded as Name is, its slashes kept."""

    def to_string(self, value: str) -> str:
        return quote(super().to_string(value))


register_url_convertor("name", Name())
register_url_convertor("file", File())


def mend_state(project: Project) -> list[str]:
    """state.yaml rebuilt from the scenes when it cannot be read and no run holds the
    project (recovery.rebuild_state, as `novel doctor --fix`): the notice for the page to
    show. Held by a run, it is left as it is, and the page meets the file's error."""
    try:
        project.state()
        return []
    except NovelError:
        pass
    try:
        with project.locked():
            return rebuild_state(project)
    except ProjectError:
        return []


def config_of(request: Request, project: Project):
    return project.config(env=request.app.state.site.env)


# -- reading ---------------------------------------------------------------------------
async def library(request: Request) -> Response:
    site: Site = request.app.state.site
    rows = await asyncio.to_thread(lambda: [library_row(p, site.word_counts, site.env)
                                            for p in site.projects()])
    return render(request, "library.html", rows=rows, folder=site.projects_dir)


async def book(request: Request) -> Response:
    project = project_of(request)
    page = int_param(request.query_params.get("page"), "page", 1)
    try:
        data = await asyncio.to_thread(book_page, project, page)
    except ProjectError as exc:
        raise NotFound(str(exc)) from None
    return render(request, "book.html", project=project, book=data, formats=FORMATS,
                  story=project.story())


async def scene(request: Request) -> Response:
    project = project_of(request)
    try:
        data = await asyncio.to_thread(scene_page, project, request.path_params["tick"])
    except ProjectError as exc:
        raise NotFound(str(exc)) from None
    return render(request, "scene.html", project=project, page=data)


async def memory(request: Request) -> Response:
    project = project_of(request)
    config = config_of(request, project)
    return render(request, "memory.html", project=project,
                  memory=await asyncio.to_thread(memory_page, project,
                                                 config.generation.loop_overdue_after))


async def context(request: Request) -> Response:
    project = project_of(request)
    stage = request.query_params.get("stage", "writer")
    if stage not in ticked():
        raise ProjectError(f"no stage '{stage}': use one of {', '.join(ticked())}")
    config = config_of(request, project)
    notices = await asyncio.to_thread(mend_state, project)
    data = await asyncio.to_thread(context_page, project, config,
                                   request.app.state.site.env, stage)
    return render(request, "context.html", project=project, stages=ticked(), notices=notices,
                  show_prompt=request.query_params.get("prompt") == "1", **data)


async def numbers(request: Request) -> Response:
    project = project_of(request)
    notices = await asyncio.to_thread(mend_state, project)
    data = await asyncio.to_thread(numbers_page, project, config_of(request, project),
                                   request.app.state.site.stats)
    return render(request, "numbers.html", project=project, notices=notices, **data)


async def stats_png(request: Request) -> Response:
    project = project_of(request)
    await asyncio.to_thread(mend_state, project)
    try:
        png = await asyncio.to_thread(make_stats_png, project, config_of(request, project),
                                      request.app.state.site.stats)
    except MissingExtraError as exc:
        return Response(str(exc), 404, media_type="text/plain")
    return Response(png, media_type="image/png")


# -- exports -----------------------------------------------------------------------------
async def make_export(request: Request) -> Response:
    project = project_of(request)
    form = await form_of(request)
    fmt = str(form.get("format") or "md")
    chapters = str(form.get("chapters") or "auto")
    result = await asyncio.to_thread(export, project, fmt, None, chapters, None)
    return RedirectResponse(request.url_for("download", name=project.name,
                                            file=result.path.name), 303)


async def download(request: Request) -> Response:
    project = project_of(request)
    path = inside(project.root / "export", request.path_params["file"])
    if path is None:
        raise NotFound(f"no file '{request.path_params['file']}' in {project.name}'s export "
                       "folder")
    return FileResponse(path, filename=path.name)


# -- the daemon ------------------------------------------------------------------------
async def live_page(request: Request) -> Response:
    project = project_of(request)
    lines, offset = log_tail(project)
    ticks = scene_ticks(project.scenes_dir)
    scenes, problems = readable_scenes(project, ticks[-10:])
    shown: list[Scene | SceneProblem] = [*scenes, *problems]
    recent = sorted(shown, key=lambda s: -s.tick)
    running, state, error = daemon_view(read_heartbeat(project))
    return render(request, "live.html", project=project, lines=lines, offset=offset,
                  recent=recent, last=ticks[-1] if ticks else 0,
                  running=running, state=state, error=error)


async def daemon_start(request: Request) -> Response:
    project = project_of(request)
    form = await form_of(request)
    ticks = int_param(str(form.get("ticks") or ""), "ticks", 0)
    interval = str(form.get("interval") or "").strip()
    try:
        seconds = interval_seconds(interval) if interval else None
    except ValueError as exc:
        raise ProjectError(f"'interval' {exc}") from None
    if ticks < 0:
        raise ProjectError("'ticks' cannot be negative")
    started = await asyncio.to_thread(request.app.state.daemons.start, project, ticks, seconds)
    message = (f"started novel run (pid {started.pid})" if started.exit_code is None
               else f"novel run (pid {started.pid}) ran and ended (exit {started.exit_code})")
    return render(request, "_message.html", message=message)


async def daemon_stop(request: Request) -> Response:
    project = project_of(request)
    await form_of(request)
    pid = request.app.state.daemons.stop(project)
    return render(request, "_message.html",
                    message=f"asked novel run (pid {pid}) to stop after its tick")


async def events(request: Request) -> Response:
    project = project_of(request)
    site: Site = request.app.state.site
    since = int_param(request.query_params.get("tick"), "tick", last_tick(project.scenes_dir))
    offset = int_param(request.query_params.get("log"), "log", log_tail(project, 0)[1])
    env = templates.env

    def render_tick(scene) -> str:
        return env.get_template("_tick.html").render(request=request, project=project, scene=scene)

    def render_log(line) -> str:
        return env.get_template("_log.html").render(line=line)

    def render_state(running: bool, state: str, error: str) -> str:
        return env.get_template("_state.html").render(running=running, state=state, error=error)

    stream = feed(project, since_tick=since, log_offset=offset, poll=site.poll,
                       render_tick=render_tick, render_log=render_log,
                       render_state=render_state, stopping=site.stopping,
                       render_progress=lambda line: escape(line))
    return StreamingResponse(stream, media_type="text/event-stream",
                             headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})


# -- steer and lore -----------------------------------------------------------------------
async def steer(request: Request) -> Response:
    project = project_of(request)
    notices = await asyncio.to_thread(mend_state, project)
    message, status = "", 200
    typed: dict[str, str] = {}          # the form as sent, shown again if refused
    if request.method == "POST":
        form = await form_of(request)
        typed = {k: str(form.get(k) or "") for k in ("text", "until", "ticks")}
        try:
            save_steer(project, typed["text"], typed["until"], typed["ticks"])
            message, typed = "saved steer.md: the next tick reads it", {}
        except NovelError as exc:
            message, status = f"not saved: {exc}", 422
    return render(request, "steer.html", status, project=project, notices=notices,
                  note={**steer_page(project), **typed}, message=message, error=status != 200)


async def lore(request: Request) -> Response:
    project = project_of(request)
    message, status = "", 200
    values: dict[str, str | bool] = {}       # the form as sent, shown again if refused
    if request.method == "POST":
        form = await form_of(request)
        text = {k: str(form.get(k) or "") for k in ("name", "keys", "content", "priority")}
        ticked = {flag: flag in form for flag in ("always", "regex", "case_sensitive")}
        values = {**text, **ticked}
        keys = text["keys"].replace(",", "\n").splitlines()
        try:
            path = add_lore(project, text["name"], keys, text["content"],
                            priority=text["priority"], always=ticked["always"],
                            regex=ticked["regex"], case_sensitive=ticked["case_sensitive"])
            message, values = f"wrote lore/{path.name}", {}
        except NovelError as exc:
            message, status = f"not added: {exc}", 422
    return render(request, "lore.html", status, project=project, lore=lore_page(project),
                  message=message, error=status != 200, values=values)


async def lore_edit(request: Request) -> Response:
    project = project_of(request)
    file = request.path_params["file"]
    message, status = "", 200
    try:
        text = lore_file_text(project, file)
    except ProjectError as exc:
        raise NotFound(str(exc)) from None
    if request.method == "POST":
        form = await form_of(request)
        text = str(form.get("text") or "")
        try:
            edit_lore(project, file, text)
            message = f"saved lore/{file}"
        except NovelError as exc:
            message, status = f"not saved: {exc}", 422
    return render(request, "lore_edit.html", status, project=project, file=file, text=text,
                  message=message, error=status != 200)


# -- errors ------------------------------------------------------------------------------
def error_page(request: Request, status: int, message: str) -> Response:
    try:
        if request.headers.get("hx-request"):     # into the page that asked, not a page
            return render(request, "_message.html", status, message=message, error=True)
        return render(request, "error.html", status, message=message, code=status)
    except Exception:   # the error page itself failed: plain text, still no traceback
        return Response(message, status, media_type="text/plain")


async def on_novel_error(request: Request, exc: Exception) -> Response:
    status = (404 if isinstance(exc, NotFound) else 409 if isinstance(exc, LockError)
              else 500 if isinstance(exc, SERVER_FAULTS) else 400)
    return error_page(request, status, str(exc))


async def on_http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    detail = exc.detail if exc.status_code != 404 or exc.detail != "Not Found" else \
        f"no page at {request.url.path}"
    return error_page(request, exc.status_code, str(detail))


async def on_crash(request: Request, exc: Exception) -> Response:
    return error_page(request, 500, f"internal error ({type(exc).__name__}): the server "
                                    "could not make this page; the files are unchanged")


async def on_disk_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, OSError)
    return error_page(request, 500, str(explain(exc)))


def create_app(site: Site, host: str = "127.0.0.1") -> Any:
    """The ASGI app over `site`, guarded (security.Guard) for a server bound to `host`."""
    p = "/p/{name:name}"
    routes = [
        Route("/", library, name="library"),
        Route("/favicon.ico", lambda r: Response(status_code=204)),
        Route(p, lambda r: RedirectResponse(r.url_for("book", name=r.path_params["name"]))),
        Route(p + "/book", book, name="book"),
        Route(p + "/scene/{tick:int}", scene, name="scene"),
        Route(p + "/export", make_export, methods=["POST"], name="export"),
        Route(p + "/download/{file:file}", download, name="download"),
        Route(p + "/live", live_page, name="live"),
        Route(p + "/daemon/start", daemon_start, methods=["POST"], name="daemon_start"),
        Route(p + "/daemon/stop", daemon_stop, methods=["POST"], name="daemon_stop"),
        Route(p + "/events", events, name="events"),
        Route(p + "/steer", steer, methods=["GET", "POST"], name="steer"),
        Route(p + "/lore", lore, methods=["GET", "POST"], name="lore"),
        Route(p + "/lore/{file:name}", lore_edit, methods=["GET", "POST"], name="lore_edit"),
        Route(p + "/memory", memory, name="memory"),
        Route(p + "/context", context, name="context"),
        Route(p + "/numbers", numbers, name="numbers"),
        Route(p + "/stats.png", stats_png, name="stats_png"),
        *edit_routes(p),
        *outline_routes(p),
        *history_routes(p),
        Mount("/static", StaticFiles(directory=str(HERE / "static")), name="static"),
    ]
    app = Starlette(routes=routes, exception_handlers={
        NovelError: on_novel_error, HTTPException: on_http_error, OSError: on_disk_error,
        Exception: on_crash})
    app.state.site = site
    app.state.daemons = Daemons(site)
    hosts = ("127.0.0.1", "localhost", "[::1]", host) if is_loopback(host) else ()
    return Guard(app, site, hosts)
