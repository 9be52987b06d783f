"""The daemon's watcher for real: a watchdog observer on real folders, real edits the way
editors save them, and the reloads they make. Each edit must make exactly one reload;
an editor's own files (swap, backup, lock, vim's write test) none.

"Exactly one" is checked without sleeping: after the reload, a barrier file is written
in the same folder; once the observer has seen it, every event of the edit has been
seen too (one inotify queue per folder, in order), so nothing may be left pending.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from novel_agent import paths
from novel_agent.daemon.reload import Reloader
from novel_agent.daemon.watch import ChangeSet, Watched, Watcher
from tests.support.processes import until


class Recording(Watcher):
    """A Watcher that also keeps every path the observer reported, watched or not."""

    def __init__(self, watched: Watched, changes: ChangeSet):
        super().__init__(watched, changes)
        self.raw: list[Path] = []

    def saw(self, path: Path) -> None:
        self.raw.append(path)
        super().saw(path)


@pytest.fixture
def configs(tmp_path, monkeypatch) -> Path:
    """A private copy of the package's configs/ (presets and models.yaml), the one in use."""
    package = tmp_path / "pkg" / "novel_agent"
    package.mkdir(parents=True)
    shutil.copytree(paths.config_dir(), package / "configs")
    monkeypatch.setattr(paths, "PACKAGE_DIR", package)
    assert paths.config_dir() == package / "configs"
    return paths.config_dir()


def start(project):
    """The daemon's watching: a Reloader, its ChangeSet and a real observer."""
    reloader = Reloader(project, {})
    changes = ChangeSet()
    watched = Watched(project, reloader.preset_file(), reloader.models_file())
    watcher = Recording(watched, changes).start()
    return SimpleNamespace(reloader=reloader, changes=changes, watched=watched,
                           watcher=watcher)


@pytest.fixture
def watching(project, configs):
    w = start(project)
    yield w
    w.watcher.stop()


def reloads(w) -> list:
    """The Reloads of the next batch of edits, once it has settled (as the daemon takes it)."""
    taken = until(lambda: w.changes.take()[0], what="an edit to settle")
    return w.reloader.apply(taken, {p: w.watched.kind(p) for p in taken})


def nothing_left(w, folder: Path) -> bool:
    """Write a barrier file in `folder`; once the observer saw it, is nothing pending?"""
    barrier = folder / "barrier"
    barrier.write_text("x\n")
    until(lambda: barrier in w.watcher.raw, what="the barrier")
    barrier.unlink()
    return not w.changes.pending()


def set_key(path: Path, section: str, key: str, value) -> str:
    """The YAML text of `path` with `section.key` set to `value`."""
    data = yaml.safe_load(path.read_text()) or {}
    data.setdefault(section, {})[key] = value
    return yaml.safe_dump(data, sort_keys=False)


def rename_save(path: Path, text: str, temp: str = ".goutputstream-X1Y2") -> None:
    """Save as gedit and most atomic writers do: a temp file, renamed over the target."""
    (path.parent / temp).write_text(text)
    os.replace(path.parent / temp, path)


def backup_save(path: Path, text: str) -> None:
    """Save as vim does by default: its write test `4913`, the file renamed to `file~`,
    the new text written, the backup removed."""
    (path.parent / "4913").write_text("")
    (path.parent / "4913").unlink()
    os.replace(path, path.parent / (path.name + "~"))
    path.write_text(text)
    (path.parent / (path.name + "~")).unlink()


def double_write(path: Path, text: str) -> None:
    """Save as editors that truncate, then write (or write twice): an empty file between."""
    path.write_text("")
    path.write_text(text)


SAVES = {"plain": Path.write_text, "rename": rename_save, "backup": backup_save,
         "double": double_write}


@pytest.mark.parametrize("save", SAVES)
def test_an_edit_of_project_yaml_is_one_reload_however_it_is_saved(project, watching, save):
    SAVES[save](project.project_file,
                set_key(project.project_file, "context", "max_prompt_tokens", 6000))
    (reload,) = reloads(watching)
    assert reload.message == "reloaded project.yaml: context.max_prompt_tokens 32000 → 6000"
    assert reload.error is None and reload.rebuild
    assert watching.reloader.config.context.max_prompt_tokens == 6000
    assert nothing_left(watching, project.root)


@pytest.mark.parametrize("save", ["plain", "rename", "double"])
def test_an_edit_of_the_preset_in_use_is_one_reload(project, watching, configs, save):
    preset = configs / "balanced.yaml"
    assert watching.watched.preset_file == preset
    SAVES[save](preset, set_key(preset, "generation", "recent_scenes_count", 5))
    (reload,) = reloads(watching)
    assert reload.message == "reloaded balanced.yaml: generation.recent_scenes_count 3 → 5"
    assert watching.reloader.config.generation.recent_scenes_count == 5
    assert nothing_left(watching, configs)


def test_an_edit_of_a_user_preset_in_use_is_one_reload(project, projects_dir, configs):
    mine = projects_dir / "presets" / "mine.yaml"
    mine.parent.mkdir()
    mine.write_text("generation:\n  full_text_scenes_count: 2\n")
    project.project_file.write_text(project.project_file.read_text()
                                    .replace("preset: balanced", "preset: mine"))
    w = start(project)
    try:
        assert w.watched.preset_file == mine
        rename_save(mine, "generation:\n  full_text_scenes_count: 4\n")
        (reload,) = reloads(w)
        assert reload.message == "reloaded mine.yaml: generation.full_text_scenes_count 2 → 4"
        assert nothing_left(w, mine.parent)
    finally:
        w.watcher.stop()


@pytest.mark.parametrize("save", ["plain", "rename", "double"])
def test_an_edit_of_models_yaml_in_use_is_one_reload_that_rebuilds(project, watching, configs,
                                                                   save):
    table = configs / "models.yaml"
    assert watching.watched.models_file == table
    text = table.read_text()
    old = "offline:                {window: 32768,   max_output: 4096}"
    assert old in text
    SAVES[save](table, text.replace(old, "offline: {window: 16384, max_output: 2048}"))
    (reload,) = reloads(watching)
    assert reload.message == ("reloaded models.yaml: offline window 32,768 → 16,384; "
                              "offline max_output 4,096 → 2,048")
    assert reload.error is None and reload.rebuild       # the daemon opens a new session
    assert watching.reloader.limits.window == 16384
    assert nothing_left(watching, configs)


def test_a_rename_saved_lore_file_is_one_reload(project, watching):
    rename_save(project.lore_dir / "tower.yaml", "keys: [tower]\ncontent: It leans.\n",
                temp="tower.yaml.tmp")
    (reload,) = reloads(watching)
    assert reload.message == "lore/tower.yaml changed (1 lore entry); the next tick reads it"
    assert nothing_left(watching, project.lore_dir)


def test_an_editors_own_files_are_no_change(project, watching):
    litter = [project.root / name for name in
              (".project.yaml.swp", ".project.yaml.swx", "project.yaml~", "4913", ".#x",
               "#project.yaml#", ".steer.md.swp")]
    litter += [project.lore_dir / name for name in
               (".tower.yaml.swp", "tower.yaml~", "4913", ".#tower.yaml", "notes.txt")]
    project.templates_dir.mkdir()
    until(lambda: project.templates_dir in watching.watcher.raw, what="templates/ watched")
    litter += [project.templates_dir / name for name in ("4913", ".write.j2.swp", "write.j2~")]
    for path in litter:
        path.write_text("not: [yaml\n")
    for folder in (project.root, project.lore_dir, project.templates_dir):
        assert nothing_left(watching, folder)
    assert set(litter) <= set(watching.watcher.raw)       # seen, and ignored
    assert watching.changes.take(quiet=0) == (set(), 0.0)
