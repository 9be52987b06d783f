"""What every page handler of `novel serve` uses (app.py's and the writer's room's:
room_*.py): the templates, `render`, the project a URL names, the posted form once its
secret is checked, a whole-number parameter, and the 404 error."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.templating import Jinja2Templates

from novel_agent.errors import (
    ConfigError,
    DamagedBookError,
    FileFormatError,
    NovelError,
    OverwriteError,
    ProjectError,
    StorageError,
    VocabularyError,
)
from novel_agent.history.branches import current
from novel_agent.story.project.folder import Project
from novel_agent.web.security import check_csrf
from novel_agent.web.site import Site

HERE = Path(__file__).parent
templates = Jinja2Templates(directory=str(HERE / "templates"))


# What the project's files or the disk did, not the request: a 500 with the one line
# naming the file (a 4xx would say the request was wrong).
SERVER_FAULTS = (FileFormatError, ConfigError, DamagedBookError, OverwriteError, StorageError,
                 VocabularyError)


class NotFound(NovelError):
    """A page for something that is not there (404)."""


def render(request: Request, name: str, status: int = 200, **context: Any) -> HTMLResponse:
    """Template `name` with `context`, the form secret, and for a project's page the
    branch it is on (the header shows it: read from one small file, never failing) and
    the search box's query (empty unless the page says)."""
    site: Site = request.app.state.site
    project = context.get("project")
    branch = current(project) if isinstance(project, Project) else None
    return templates.TemplateResponse(request, name, {"csrf": site.csrf, "notices": (),
                                                      "branch": branch, "query": "", **context},
                                      status_code=status)


def project_of(request: Request) -> Project:
    """The served project the URL names (404 when there is none)."""
    try:
        return request.app.state.site.project(request.path_params["name"])
    except ProjectError as exc:
        raise NotFound(str(exc)) from None


async def form_of(request: Request) -> Any:
    """The posted form, once it is seen to carry the server's secret (else 403)."""
    form = await request.form()
    if not check_csrf(request.app.state.site, form, request.headers):
        raise HTTPException(403, "refused: the form did not come from this server's page "
                                 "(reload the page and try again)")
    return form


def int_param(value: str | None, name: str, default: int) -> int:
    """`value` as a whole number (`default` when empty); ProjectError naming `name`."""
    try:
        return int(value) if value not in (None, "") else default
    except ValueError:
        raise ProjectError(f"'{name}' must be a whole number, not {value!r}") from None
