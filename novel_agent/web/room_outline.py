"""The Outline page of `novel serve` (/p/NAME/outline): the book's shape as
web/outline_page.py reads it, and the fields of a part not locked edited in the page.

An edit is saved by revision/outline_edits.edit_part under the project's lock, held
as `novel outline edit` holds it (history.hooks.opened: an edit by hand recorded
first), and checked as that command checks the file; a refused edit is the page
again with its one line (422; 409 while a run holds the project) and what was typed
in the part's form, opened.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from novel_agent.errors import LockError, NovelError
from novel_agent.history.hooks import opened
from novel_agent.revision.outline_edits import describe, edit_part
from novel_agent.story.outline.file import Outline
from novel_agent.story.project.folder import Project
from novel_agent.web.common import form_of, project_of, render
from novel_agent.web.outline_page import outline_page, typed_values


def save_part(project: Project, address: str, values: Mapping[str, str],
              was: str | None) -> Outline | None:
    """edit_part with the project's lock held (LockError when a run holds it)."""
    with opened(project):
        return edit_part(project, address, values, was)


async def outline(request: Request) -> Response:
    project = project_of(request)
    curve = project.config(env=request.app.state.site.env).outline.curve
    message, status, address, typed = "", 200, "", {}
    if request.method == "POST":
        form = await form_of(request)
        address = str(form.get("part") or "")
        typed = typed_values(form, address)
        try:
            saved = await asyncio.to_thread(save_part, project, address, typed,
                                            str(form.get("was") or "") or None)
            message = (f"saved outline/outline.yaml: {describe(address)}" if saved is not None
                       else f"{describe(address)} unchanged: nothing saved")
            address, typed = "", {}
        except NovelError as exc:
            message, status = f"not saved: {exc}", 409 if isinstance(exc, LockError) else 422
    page = await asyncio.to_thread(outline_page, project, curve)
    return render(request, "outline.html", status, project=project, page=page, message=message,
                  error=status != 200, open_part=address, typed=typed)


def routes(p: str) -> list[Route]:
    """The Outline page's route under `p` ("/p/{name:name}")."""
    return [Route(p + "/outline", outline, methods=["GET", "POST"], name="outline")]
