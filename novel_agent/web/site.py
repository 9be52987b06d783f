"""The projects `novel serve` shows, and what it was told when it started.

A URL names a project by its folder's name; `Site.project(name)` looks the name
up among the projects found at start (or since: a new folder under the projects
folder appears on the next look), so no part of a URL ever becomes a path.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from novel_agent.errors import ProjectError
from novel_agent.story.project.folder import PROJECT_FILE, Project


@dataclass
class Site:
    """What the server serves: one project, or every project under a folder."""

    projects_dir: Path | None = None          # every project under it, found on each look
    single: Project | None = None             # or this one alone
    env: Mapping[str, str] = field(default_factory=dict)   # for configs and `novel run`
    novel_command: tuple[str, ...] = ("novel",)            # how to start `novel run`
    token: str = ""                           # required on every request when set
    csrf: str = ""                            # the secret every form carries
    poll: float = 0.5                         # how often the live feed looks at the files
    stopping: Callable[[], bool] = lambda: False   # the server is shutting down: feeds end
    word_counts: dict[Path, tuple[int, int, int]] = field(default_factory=dict)
    # ^ scene file -> (mtime_ns, size, words), so the library reads only changed scenes
    stats: dict[Any, tuple] = field(default_factory=dict)    # see pages.project_stats

    def projects(self) -> list[Project]:
        """The projects served, by name."""
        if self.single is not None:
            return [self.single]
        if self.projects_dir is None or not self.projects_dir.is_dir():
            return []
        return sorted((Project(p.parent) for p in self.projects_dir.glob(f"*/{PROJECT_FILE}")),
                      key=lambda p: p.name)

    def project(self, name: str) -> Project:
        """The served project called `name`; ProjectError if there is none."""
        for project in self.projects():
            if project.name == name:
                return project
        raise ProjectError(f"no project '{name}' here", path=name)


def is_loopback(host: str) -> bool:
    """Whether `host` (a name or an address) is this machine only."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
