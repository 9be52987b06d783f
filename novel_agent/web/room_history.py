"""The writer's room: the history (`novel log` and each entry's diff; rewind, undo and
redo, each confirmed first), the branches (list, new at a tick, switch, delete,
confirmed first) and the search (`novel search`'s hits, linked).

Every act runs the library function its command runs (history/rewind.py, redo via
tick/redo_tick.py, history/branches.py) inside `opened` (history/hooks.py), as the CLI
does: the project's lock taken (a running daemon holds it: the act is refused, 409,
every file as it was), the project reconciled and its hand edits recorded first. A
confirmation page says what the act will do, computed by the library without writing
(`rewinding`, `undoing`, `redoing`, `deleting`), and its form carries the entry the
branch was at: if the book moved since, the act is refused (409) and asks to look again.
A refused form is shown again with what was typed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from novel_agent.errors import LockError, NovelError, ProjectError
from novel_agent.history import branches as branching
from novel_agent.history import redo
from novel_agent.history.hooks import opened
from novel_agent.history.rewind import rewind, rewinding, undo, undoing
from novel_agent.history.store import History
from novel_agent.index.documents import KINDS
from novel_agent.story.project.folder import Project
from novel_agent.tick.redo_tick import redo_tick
from novel_agent.web.common import NotFound, form_of, int_param, project_of, render
from novel_agent.web.edits import form_text
from novel_agent.web.history_pages import (
    SEARCH_LIMIT,
    branches_page,
    entry_diff,
    log_page,
    search_hits,
)
from novel_agent.web.site import Site

UNDO_HOW = "Undo on the History page"
T = TypeVar("T")


class Changed(ProjectError):
    """The book moved since the confirmation page was made (409): look again."""


def brought_up_to_date(project: Project) -> tuple[list[str], str]:
    """As the CLI opens a project before it reads it (cli.common.open_project):
    reconciled, its hand edits recorded, when no other process holds it. The notices,
    and the line saying who holds it when one does ("" when none)."""
    try:
        with opened(project) as notices:
            return notices, ""
    except LockError as exc:
        return [], str(exc)
    except ProjectError:
        return [], ""


def acting(project: Project, head: str, act: Callable[[], T]) -> T:
    """`act()` with the project opened (locked, reconciled, hand edits recorded), once
    the branch is seen to be at entry `head` still (when given)."""
    with opened(project):
        if head and History(project).head().sha != head:
            raise Changed("the book changed since this page was made (a tick landed, or "
                          "another page moved it): nothing was done; look again",
                          path=str(project.root))
        return act()


def refused(exc: NovelError) -> int:
    """The status of an act refused with `exc`: busy or moved (409), else the form's 422."""
    return 409 if isinstance(exc, (LockError, Changed)) else 422


async def in_thread(call: Callable[..., T], *args: Any) -> T:
    return await asyncio.to_thread(call, *args)


# -- the log and the diffs ---------------------------------------------------------------
async def history(request: Request) -> Response:
    project = project_of(request)
    page = int_param(request.query_params.get("page"), "page", 1)
    notices, busy = await in_thread(brought_up_to_date, project)
    return await log_view(request, project, page=page, notices=notices, busy=busy)


async def log_view(request: Request, project: Project, status: int = 200, page: int = 1,
                   **context: Any) -> Response:
    data = await in_thread(log_page, project, page)
    return render(request, "history.html", status, project=project, log=data, **context)


async def entry(request: Request) -> Response:
    project = project_of(request)
    try:
        data = await in_thread(entry_diff, project, request.path_params["sha"])
    except ProjectError as exc:
        raise NotFound(str(exc)) from None
    return render(request, "history_entry.html", project=project, diff=data)


# -- rewind and undo ---------------------------------------------------------------------
async def rewind_page(request: Request) -> Response:
    """GET: what a rewind to `tick` will do, to confirm; POST: do it."""
    project = project_of(request)
    if request.method == "GET":
        tick = int_param(request.query_params.get("tick"), "tick", -1)
        return await confirm_view(request, project, "rewind", tick)
    form = await form_of(request)
    tick = int_param(str(form.get("tick") or ""), "tick", -1)
    try:
        moved = await in_thread(acting, project, str(form.get("head") or ""),
                                lambda: rewind(project, tick))
    except NovelError as exc:
        return await confirm_view(request, project, "rewind", tick, refused(exc),
                                  message=f"not rewound: {exc}")
    return await log_view(request, project, message="rewound " + moved.line(UNDO_HOW))


async def undo_page(request: Request) -> Response:
    """GET: what an undo of the last rewind will do, to confirm; POST: do it."""
    project = project_of(request)
    if request.method == "GET":
        return await confirm_view(request, project, "undo")
    form = await form_of(request)
    try:
        moved = await in_thread(acting, project, str(form.get("head") or ""),
                                lambda: undo(project))
    except NovelError as exc:
        return await confirm_view(request, project, "undo", status=refused(exc),
                                  message=f"not undone: {exc}")
    return await log_view(request, project, message="undone: " + moved.line(UNDO_HOW))


async def confirm_view(request: Request, project: Project, act: str, tick: int = -1,
                       status: int = 200, message: str = "", note: str = "") -> Response:
    """The confirmation of a rewind, an undo or a redo: what it will do (the library's
    reckoning, nothing written); the act's error when it cannot be done."""
    notices, busy = await in_thread(brought_up_to_date, project)
    if act != "undo" and tick < 0:
        raise ProjectError(f"say which tick to {act}: ?tick=N")
    reckon = {"rewind": lambda: rewinding(project, tick), "undo": lambda: undoing(project),
              "redo": lambda: redo.redoing(project, tick)}[act]
    try:
        moved, problem = await in_thread(reckon), ""
    except NovelError as exc:
        moved, problem = None, str(exc)
    return render(request, f"history_{'redo' if act == 'redo' else 'rewind'}.html", status,
                  project=project, act=act, tick=tick, moved=moved, problem=problem,
                  busy=busy, notices=notices, message=message, error=bool(message), note=note)


# -- redo --------------------------------------------------------------------------------
class TickFailed(NovelError):
    """The redone tick failed (500): its one line, the project put back."""


def redo_now(project: Project, site: Site, head: str, tick: int, note: str) -> str:
    """Tick `tick` written again with `note` (inside `acting`); what was done, in one
    line. A tick that fails is put back at once (redo.settle, as the next opening would:
    the project is as before the redo, not left rewound) and its error says so."""
    def act() -> str:
        config = project.config(env=site.env)
        try:
            moved, result = redo_tick(project, config, site.env, tick, note)
        except NovelError as exc:
            back = redo.settle(project)
            if not back:            # refused before the rewind, or the tick had landed
                raise
            raise TickFailed(f"{exc}; {back[0]}") from exc
        except Exception:
            redo.settle(project)
            raise
        return (f"rewound {moved.line(UNDO_HOW)}; wrote tick {result.tick} again: "
                f"\"{result.title}\", {result.words} words")
    return acting(project, head, act)


async def redo_page(request: Request) -> Response:
    """GET: what a redo of `tick` will do, with a box for its note; POST: do it."""
    project = project_of(request)
    if request.method == "GET":
        tick = int_param(request.query_params.get("tick"), "tick", -1)
        return await confirm_view(request, project, "redo", tick)
    form = await form_of(request)
    tick = int_param(str(form.get("tick") or ""), "tick", -1)
    note = " ".join(form_text(str(form.get("note") or "")).split())
    try:
        line = await in_thread(redo_now, project, request.app.state.site,
                               str(form.get("head") or ""), tick, note)
    except NovelError as exc:
        status = 500 if isinstance(exc, TickFailed) else refused(exc)
        return await confirm_view(request, project, "redo", tick, status,
                                  message=f"not redone: {exc}", note=note)
    return await log_view(request, project, message=line, redone=tick)


# -- branches ----------------------------------------------------------------------------
async def branches_view(request: Request, project: Project, status: int = 200,
                        **context: Any) -> Response:
    data = await in_thread(branches_page, project)
    return render(request, "branches.html", status, project=project, page=data, **context)


async def branch_list(request: Request) -> Response:
    project = project_of(request)
    notices, busy = await in_thread(brought_up_to_date, project)
    at = request.query_params.get("at", "")
    return await branches_view(request, project, notices=notices, busy=busy,
                               typed={"name": "", "at": at})


async def branch_new(request: Request) -> Response:
    project = project_of(request)
    form = await form_of(request)
    typed = {k: str(form.get(k) or "").strip() for k in ("name", "at")}
    try:
        at = int_param(typed["at"], "at", -1)
        made, _ = await in_thread(acting, project, "", lambda: branching.new(
            project, typed["name"], at if at >= 0 else None))
    except NovelError as exc:
        return await branches_view(request, project, refused(exc), typed=typed,
                                   message=f"not made: {exc}", error=True)
    return await branches_view(request, project, typed={"name": "", "at": ""},
                               message=f"on new branch {made.name}, at tick {made.head.tick}")


async def branch_switch(request: Request) -> Response:
    project = project_of(request)
    form = await form_of(request)
    name = str(form.get("branch") or "")
    try:
        now_on, changed = await in_thread(acting, project, "",
                                          lambda: branching.switch(project, name))
    except NovelError as exc:
        return await branches_view(request, project, refused(exc), typed={"name": "", "at": ""},
                                   message=f"not switched: {exc}", error=True)
    return await branches_view(request, project, typed={"name": "", "at": ""},
                               message=f"on branch {now_on.name}, at tick {now_on.head.tick} "
                                       f"({len(changed)} files changed)")


async def branch_delete(request: Request) -> Response:
    """GET: what deleting branch `branch` will do, to confirm; POST: do it."""
    project = project_of(request)
    if request.method == "GET":
        return await delete_view(request, project, request.query_params.get("branch", ""))
    form = await form_of(request)
    name = str(form.get("branch") or "")
    try:
        tag = await in_thread(acting, project, "", lambda: branching.delete(project, name))
    except NovelError as exc:
        return await delete_view(request, project, name, refused(exc),
                                 message=f"not deleted: {exc}")
    return await branches_view(request, project, typed={"name": "", "at": ""},
                               message=f"deleted branch {name}; its entries are kept as the "
                                       f"tag {tag}")


async def delete_view(request: Request, project: Project, name: str, status: int = 200,
                      message: str = "") -> Response:
    notices, busy = await in_thread(brought_up_to_date, project)
    try:
        (doomed, tag), problem = await in_thread(branching.deleting, project, name), ""
    except NovelError as exc:
        doomed, tag, problem = None, "", str(exc)
    return render(request, "branch_delete.html", status, project=project, asked=name,
                  doomed=doomed, tag=tag, problem=problem, busy=busy, notices=notices,
                  message=message, error=bool(message))


# -- search ------------------------------------------------------------------------------
async def search_page(request: Request) -> Response:
    project = project_of(request)
    query = request.query_params.get("q", "")
    kind = request.query_params.get("kind", "")
    limit = min(500, max(1, int_param(request.query_params.get("limit"), "limit",
                                      SEARCH_LIMIT)))
    hits, line = await in_thread(search_hits, project, query, kind, limit)
    return render(request, "search.html", project=project, query=query, kind=kind,
                  kinds=KINDS, hits=hits, limit=limit, notices=[line] if line else [])


def routes(p: str) -> list[Route]:
    """The writer's room's history, branch and search routes under `p` ("/p/{name:name}")."""
    both = ["GET", "POST"]
    return [
        Route(p + "/history", history, name="history"),
        Route(p + "/history/entry/{sha}", entry, name="history_entry"),
        Route(p + "/history/rewind", rewind_page, methods=both, name="history_rewind"),
        Route(p + "/history/undo", undo_page, methods=both, name="history_undo"),
        Route(p + "/history/redo", redo_page, methods=both, name="history_redo"),
        Route(p + "/branches", branch_list, name="branches"),
        Route(p + "/branches/new", branch_new, methods=["POST"], name="branch_new"),
        Route(p + "/branches/switch", branch_switch, methods=["POST"], name="branch_switch"),
        Route(p + "/branches/delete", branch_delete, methods=both, name="branch_delete"),
        Route(p + "/search", search_page, name="search"),
    ]
