"""The symbolic links in a project folder, and which of them lead out of it.

A project folder is shared and downloaded; a link in it that leads out (to
/etc/passwd, to another book) is never read through (files.read_bytes refuses
it). `project_links(root)` lists every link under the folder, the history's git
folder left out, each with whether it leads out; `novel doctor` names them all
(reports/doctor.py) and removes or replaces those that lead out. Nothing here
opens a link's target: a link is read by its name (os.readlink, os.path.realpath).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from novel_agent.files import leaves

SKIPPED = (".novel/history.git", ".git")    # the history's own folders (history/git.py)


@dataclass(frozen=True)
class Link:
    """A link in the project: its path relative to the folder, where it points, and
    whether (its links and `..` followed) it leads out of the folder."""

    rel: str
    target: str
    out: bool


def project_links(root: Path) -> list[Link]:
    """Every link under `root` (a link to a folder is listed, not walked into), by path."""
    found: list[Link] = []
    for folder, dirs, names in os.walk(root, followlinks=False):
        here = Path(folder)
        rel_here = here.relative_to(root).as_posix()
        dirs[:] = [d for d in dirs if f"{rel_here}/{d}".removeprefix("./") not in SKIPPED]
        for name in [*dirs, *names]:
            path = here / name
            if path.is_symlink():
                try:
                    target = os.readlink(path)
                except OSError:
                    target = "?"
                found.append(Link(path.relative_to(root).as_posix(), target,
                                  leaves(root, path)))
    return sorted(found, key=lambda link: link.rel)
