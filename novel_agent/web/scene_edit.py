"""Scene N edited in the page, then `novel revise N` on it.

The editor's form carries `base`, the sha256 of the scene file it was opened on. A save
takes the project's lock (as `novel revise` does: reconciled, the history brought up to
date), and is refused (EditConflict, with a unified diff between the file as it is now
and what was typed) when the file is no longer that text: two tabs never lose an edit.
Otherwise the title and prose are written as the scene file is written (its front matter
kept: Scene.render), and the revise runs on it (revision/revise.py, as `novel revise N`
after an edit by hand); with `rewrite_after`, the later scenes are then taken away (kept
under a tag) to be written again. A text that is refused leaves every file as it was.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from novel_agent.config.settings import Config
from novel_agent.errors import NovelError, ProjectError
from novel_agent.files import atomic_write, read_bytes
from novel_agent.history.hooks import opened
from novel_agent.history.rewind import keep_tag
from novel_agent.history.store import History
from novel_agent.revision.revise import Revision, revise, take_away_after
from novel_agent.story.project.folder import Project
from novel_agent.story.scenes import Scene, load_scene
from novel_agent.tick.session import Session
from novel_agent.web.edits import form_text

MAX_TITLE = 200            # characters: a title is one line
MAX_PROSE = 200_000        # characters: some fifty times a long scene
HASH = re.compile(r"[0-9a-f]{64}")


class EditConflict(ProjectError):
    """The scene file changed since the editor was opened: `diff` (unified, the file as it
    is now against what was typed) and `base`, the file's hash now."""

    def __init__(self, message: str, *, path: str, diff: str, base: str):
        self.diff, self.base = diff, base
        super().__init__(message, path=path)


@dataclass
class Typed:
    """The editor's form as sent: the title, the prose, the hash it was opened on."""

    title: str
    prose: str
    base: str


@dataclass
class Saved:
    """What a save did: the revise's report (None when nothing changed, or when the revise
    failed after the scene was saved: `failed` says why), the tag the later scenes were
    kept under when they were taken away, the notices."""

    tick: int
    revision: Revision | None
    kept: str = ""
    notices: list[str] = field(default_factory=list)
    failed: str = ""


def file_hash(path: Path) -> str:
    """The sha256 of a file's bytes ("" when it is not there)."""
    try:
        return hashlib.sha256(read_bytes(path)).hexdigest()
    except FileNotFoundError:
        return ""


def scene_to_edit(project: Project, tick: int) -> tuple[Scene, str]:
    """Scene `tick` and its file's hash; ProjectError when there is no such scene."""
    path = project.scene_path(tick)
    if not path.is_file():
        raise ProjectError(f"no scene {tick} in {project.name}", path=str(path))
    return load_scene(path), file_hash(path)


def checked(project: Project, tick: int, typed: Typed) -> Typed:
    """The form's title and prose as the file holds them (Unix line endings, the title one
    line), or a ProjectError naming the scene file and what is wrong."""
    path = str(project.scene_path(tick))
    if not HASH.fullmatch(typed.base.strip()):
        raise ProjectError(f"{path}: the form does not say which text it was opened on "
                           "(its 'base'); open the editor again", path=path)
    title, prose = " ".join(form_text(typed.title).split()), form_text(typed.prose).strip()
    if not prose:
        raise ProjectError(f"{path}: the scene's text is empty; a scene to take away is "
                           "rewound, not emptied", path=path)
    if len(prose) > MAX_PROSE:
        raise ProjectError(f"{path}: the scene's text is {len(prose):,} characters, over "
                           f"the {MAX_PROSE:,} a scene may have", path=path)
    if len(title) > MAX_TITLE:
        raise ProjectError(f"{path}: the title is {len(title):,} characters, over the "
                           f"{MAX_TITLE} a title may have", path=path)
    return Typed(title, prose, typed.base.strip())


def as_lines(title: str, prose: str) -> list[str]:
    """A scene as the diff shows it: its title line, then its prose."""
    return [f"title: {title}", "", *prose.splitlines()]


def conflict_diff(project: Project, tick: int, typed: Typed) -> str:
    """A unified diff from scene `tick` as the file holds it now to what was typed."""
    path = project.scene_path(tick)
    rel = path.relative_to(project.root).as_posix()
    try:
        now = load_scene(path)
        old = as_lines(now.title, now.body)
    except (NovelError, OSError) as exc:       # gone, or broken by hand: shown as it is
        old = [f"({exc})"]
    lines = difflib.unified_diff(old, as_lines(typed.title, typed.prose),
                                 fromfile=f"{rel} (on disk now)", tofile="your text",
                                 lineterm="")
    return "\n".join(lines)


def refuse_if_moved(project: Project, tick: int, typed: Typed) -> None:
    """EditConflict when scene `tick`'s file is not the text the form was opened on."""
    path = project.scene_path(tick)
    now = file_hash(path)
    if now != typed.base:
        raise EditConflict(f"scene {tick} was changed since this editor was opened (in "
                           "another tab, by a tick, or by hand): nothing was saved; the "
                           "difference is below, your text is kept in the form, and saving "
                           "again replaces the scene on disk with it", path=str(path),
                           diff=conflict_diff(project, tick, typed), base=now)


def taking_away(project: Project, tick: int) -> tuple[int, str]:
    """What `rewrite_after` would take away: the last tick, and the tag that would keep it
    (a ProjectError when it cannot be: no scene after `tick`, or no history)."""
    last = project.tick()
    if last <= tick:
        raise ProjectError(f"scene {tick} is the last scene: there is nothing after it to "
                           "write again", path=str(project.scenes_dir))
    history = History(project)
    if not history.available or not history.git.exists():
        raise ProjectError("the later scenes cannot be taken away: the project has no "
                           "history (git is missing); save without rewriting what follows",
                           path=str(project.novel_dir))
    return last, keep_tag(history, history.git.branch(), history.head())


def save_and_revise(project: Project, config: Config, env: Mapping[str, str], tick: int,
                    typed: Typed, *, rewrite_after: bool = False) -> Saved:
    """Write scene `tick`'s new title and prose (checked, and refused with EditConflict if
    its file moved since `typed.base`), then revise it; `rewrite_after`: the later scenes
    then taken away, to be written again. Holds the project's lock (LockError when a
    daemon holds it); nothing is written when the text is as the file has it."""
    typed = checked(project, tick, typed)
    with opened(project) as notices:
        refuse_if_moved(project, tick, typed)
        scene = load_scene(project.scene_path(tick))
        if (scene.title, scene.body.strip()) == (typed.title, typed.prose):
            return Saved(tick, None, notices=[*notices, "the text is as the file has it: "
                                              "nothing saved, nothing revised"])
        with Session.open(project, config, env) as session:   # (a bad config: not saved)
            edited = replace(scene, title=typed.title, body=typed.prose)
            atomic_write(project.scene_path(tick), edited.render())
            return revised(session, tick, notices, rewrite_after=rewrite_after)


def revised(session: Session, tick: int, notices: list[str], *,
            rewrite_after: bool = False) -> Saved:
    """Revise scene `tick` as its file is now (the caller holds the lock); a revise that
    fails is said in `failed`, the scene staying as saved (`novel revise N` later, or the
    page's "revise again", makes memory follow it)."""
    saved = Saved(tick, None, notices=notices)
    try:
        saved.revision = revise(session, tick)
        if rewrite_after:
            saved.kept = take_away_after(session, saved.revision)
    except NovelError as exc:
        saved.failed = (f"the later scenes were not taken away: {exc}" if saved.revision
                        else str(exc))
    saved.notices += session.take_notes()
    return saved


def revise_as_is(project: Project, config: Config, env: Mapping[str, str],
                 tick: int) -> Saved:
    """`novel revise N` on the scene file as it is (an edit by hand, or a save whose
    revise failed)."""
    if not project.scene_path(tick).is_file():
        raise ProjectError(f"no scene {tick} in {project.name}",
                           path=str(project.scene_path(tick)))
    with opened(project) as notices, Session.open(project, config, env) as session:
        return revised(session, tick, notices)
