"""The writer's room, part one: a scene edited and revised in the page (scene_edit.py),
the book's continuity findings and a scene's (continuity.py), and the tick the audit
held, accepted, dropped or sent back with a note (held_actions.py).

Thin handlers over those modules, with the pages' helpers of web/common.py. A refused form is the page
again with what was typed, its one line, and the status: 409 when the project is busy
(a daemon holds it) or the scene moved under the editor, 422 when the form was wrong; a
destructive act (rewrite what follows, drop a draft, send it back) is asked again on a
page that says what will happen, and done only when that page's button is pressed.
"""

from __future__ import annotations

import asyncio
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from novel_agent.errors import AuditHoldError, LockError, NovelError
from novel_agent.story.project.folder import Project
from novel_agent.web import held_actions
from novel_agent.web.common import SERVER_FAULTS, NotFound, form_of, project_of, render
from novel_agent.web.continuity import continuity_page, held_view, scene_findings
from novel_agent.web.scene_edit import (
    EditConflict,
    Typed,
    checked,
    refuse_if_moved,
    revise_as_is,
    save_and_revise,
    scene_to_edit,
    taking_away,
)


def _refused(exc: NovelError) -> int:
    """A refused form's status: 409 busy or moved, 500 the project's files or the disk (as
    common.py's SERVER_FAULTS), else 422 (the form was wrong)."""
    if isinstance(exc, (LockError, EditConflict)):
        return 409
    return 500 if isinstance(exc, SERVER_FAULTS) else 422


def _config(request: Request, project: Project):
    return project.config(env=request.app.state.site.env)


# -- a scene, edited and revised ------------------------------------------------------------
async def scene_edit(request: Request) -> Response:
    project = project_of(request)
    tick = request.path_params["tick"]
    try:
        scene, base = await asyncio.to_thread(scene_to_edit, project, tick)
    except NovelError as exc:
        raise NotFound(str(exc)) from None
    if request.method == "GET":
        return editor(request, project, tick, Typed(scene.title, scene.body, base))
    form = await form_of(request)
    typed = Typed(*(str(form.get(k) or "") for k in ("title", "prose", "base")))
    rewrite = "rewrite_after" in form
    if "back" in form:                   # from the confirmation, to the editor as typed
        return editor(request, project, tick, typed, rewrite=rewrite)
    try:
        typed = checked(project, tick, typed)
        if rewrite and form.get("confirm") != "yes":
            refuse_if_moved(project, tick, typed)
            last, tag = await asyncio.to_thread(taking_away, project, tick)
            return render(request, "scene_edit_confirm.html", project=project, tick=tick,
                              typed=typed, last=last, tag=tag)
        saved = await asyncio.to_thread(save_and_revise, project, _config(request, project),
                                        request.app.state.site.env, tick, typed,
                                        rewrite_after=rewrite)
    except EditConflict as exc:
        typed.base = exc.base             # saving again (after reading the diff) replaces it
        return editor(request, project, tick, typed, rewrite=rewrite, status=409,
                      message=f"not saved: {exc}", diff=exc.diff)
    except NovelError as exc:
        return editor(request, project, tick, typed, rewrite=rewrite, status=_refused(exc),
                      message=f"not saved: {exc}")
    started = ""
    if saved.kept and saved.revision is not None:
        started = await asyncio.to_thread(rewrite_later, request, project,
                                          saved.revision.last - tick)
    return render(request, "scene_revised.html", project=project, saved=saved, tick=tick,
                      started=started)


def rewrite_later(request: Request, project: Project, count: int) -> str:
    """The `count` scenes taken away, written again by `novel run` (as the Live page starts
    it, one after another); one line saying so, or why it could not start."""
    try:
        started = request.app.state.daemons.start(project, count, 0.0)
    except NovelError as exc:
        return (f"novel run could not start ({exc}): start it from the Live page to write "
                f"the {count} scenes again")
    return f"novel run (pid {started.pid}) is writing the {count} scenes again"


def editor(request: Request, project: Project, tick: int, typed: Typed, *,
           rewrite: bool = False, status: int = 200, message: str = "",
           diff: str = "") -> Response:
    return render(request, "scene_edit.html", status, project=project, tick=tick,
                         typed=typed, rewrite=rewrite, message=message, error=status != 200,
                         diff=diff)


async def scene_revise(request: Request) -> Response:
    """`novel revise N` on the scene file as it is."""
    project = project_of(request)
    await form_of(request)
    tick = request.path_params["tick"]
    saved = await asyncio.to_thread(revise_as_is, project, _config(request, project),
                                    request.app.state.site.env, tick)
    return render(request, "scene_revised.html", project=project, saved=saved, tick=tick,
                      started="")


# -- continuity -------------------------------------------------------------------------
async def continuity(request: Request) -> Response:
    project = project_of(request)
    data = await asyncio.to_thread(continuity_page, project, _config(request, project))
    return render(request, "continuity.html", project=project, **data)


async def findings_of_scene(request: Request) -> Response:
    """A scene's findings, the fragment its page loads."""
    project = project_of(request)
    tick = request.path_params["tick"]
    try:
        found = await asyncio.to_thread(scene_findings, project, _config(request, project),
                                        tick)
    except NovelError as exc:
        if isinstance(exc, SERVER_FAULTS):
            raise
        raise NotFound(str(exc)) from None
    return render(request, "_findings.html", project=project, findings=found, tick=tick)


# -- the held tick ------------------------------------------------------------------------
async def held(request: Request) -> Response:
    project = project_of(request)
    return held_page(request, project)


def held_page(request: Request, project: Project, *, status: int = 200, message: str = "",
              note: str = "", view: Any = None) -> Response:
    return render(request, "held.html", status, project=project,
                         held=view or held_view(project), message=message,
                         error=status != 200, note=note)


async def held_accept(request: Request) -> Response:
    project = project_of(request)
    await form_of(request)
    try:
        result = await asyncio.to_thread(held_actions.accept, project,
                                         _config(request, project),
                                         request.app.state.site.env)
    except NovelError as exc:
        return held_page(request, project, status=_refused(exc), message=f"not accepted: {exc}")
    return render(request, "held_done.html", project=project, result=result,
                      done=f"tick {result.tick} accepted as it was held")


async def held_drop(request: Request) -> Response:
    project = project_of(request)
    form = await form_of(request)
    if form.get("confirm") != "yes":
        return confirm_held(request, project, "drop")
    try:
        dropped = await asyncio.to_thread(held_actions.drop, project)
    except NovelError as exc:
        return held_page(request, project, status=_refused(exc), message=f"not dropped: {exc}")
    return render(request, "held_done.html", project=project, result=None,
                      done=f"dropped the held tick {dropped.get('tick')} "
                           f"\u201c{dropped.get('title', '')}\u201d; the next tick writes it again")


async def held_send_back(request: Request) -> Response:
    project = project_of(request)
    form = await form_of(request)
    note = str(form.get("note") or "")
    if "back" in form:                   # from the confirmation, to the page as typed
        return held_page(request, project, note=note)
    try:
        checked_note = held_actions.checked_note(project, note)
        if form.get("confirm") != "yes":
            return confirm_held(request, project, "send_back", note=checked_note)
        result = await asyncio.to_thread(held_actions.send_back, project,
                                         _config(request, project),
                                         request.app.state.site.env, checked_note)
    except AuditHoldError as exc:
        return held_page(request, project, message=f"written again with the note, and held "
                         f"again: {str(exc).splitlines()[0]}")
    except NovelError as exc:
        return held_page(request, project, status=_refused(exc), note=note,
                         message=f"not sent back: {exc}")
    return render(request, "held_done.html", project=project, result=result,
                      done=f"tick {result.tick} written again with the note")


def confirm_held(request: Request, project: Project, action: str, note: str = "") -> Response:
    view = held_view(project)
    if view is None:
        return held_page(request, project, status=422,
                         message=f"not done: {held_actions.no_held(project)}", note=note)
    return render(request, "held_confirm.html", project=project, held=view,
                         action=action, note=note)


def routes(p: str) -> list[Route]:
    """The routes of this part of the room, under `p` ("/p/{name:name}")."""
    return [
        Route(p + "/scene/{tick:int}/edit", scene_edit, methods=["GET", "POST"],
              name="scene_edit"),
        Route(p + "/scene/{tick:int}/revise", scene_revise, methods=["POST"],
              name="scene_revise"),
        Route(p + "/scene/{tick:int}/findings", findings_of_scene, name="scene_findings"),
        Route(p + "/continuity", continuity, name="continuity"),
        Route(p + "/held", held, name="held"),
        Route(p + "/held/accept", held_accept, methods=["POST"], name="held_accept"),
        Route(p + "/held/drop", held_drop, methods=["POST"], name="held_drop"),
        Route(p + "/held/send-back", held_send_back, methods=["POST"], name="held_send_back"),
    ]
