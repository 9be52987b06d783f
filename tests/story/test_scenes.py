"""Scene files read by tick: each parsed once while it stays as it is, a hand edit seen."""

from __future__ import annotations

import os

from novel_agent.story import scenes as scenes_module
from novel_agent.story.scenes import Scene, SceneReader, last_tick, scene_ticks


def write(folder, tick: int, body: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"scene_{tick:03d}.md").write_text(
        Scene(tick=tick, body=body, title=f"Scene {tick}").render(), encoding="utf-8")


def test_a_scene_is_parsed_once_while_its_file_stays_and_again_once_edited(tmp_path, monkeypatch):
    folder = tmp_path / "scenes"
    for tick in (1, 2, 3):
        write(folder, tick, f"The bell rang {tick} times.")
    parsed: list[int] = []
    real = scenes_module.load_scene
    monkeypatch.setattr(scenes_module, "load_scene",
                        lambda path: parsed.append(int(path.stem[6:])) or real(path))
    assert [s.tick for s in SceneReader(folder).recent(3, 3)] == [1, 2, 3]
    assert [s.body for s in SceneReader(folder).recent(3, 3)][1] == "The bell rang 2 times."
    assert parsed == [1, 2, 3]                       # the second reader parsed nothing
    path = folder / "scene_002.md"
    mtime = path.stat().st_mtime_ns
    with path.open("r+", encoding="utf-8") as handle:     # in place, the same size
        text = handle.read().replace("rang 2", "rang 9")
        handle.seek(0)
        handle.write(text)
    os.utime(path, ns=(mtime + 1, mtime + 1))
    assert SceneReader(folder)(2).body == "The bell rang 9 times." and parsed[-1] == 2
    path.unlink()
    assert SceneReader(folder)(2) is None and SceneReader(folder)(4) is None


def test_scene_ticks_are_the_numbered_scene_files_in_order(tmp_path):
    folder = tmp_path / "scenes"
    for tick in (10, 2, 1000):
        write(folder, tick, "Rain.")
    (folder / "notes.md").write_text("not a scene")
    (folder / "scene_7.md.bak").write_text("not a scene")
    assert scene_ticks(folder) == [2, 10, 1000] and last_tick(folder) == 1000
    assert scene_ticks(tmp_path / "missing") == [] and last_tick(tmp_path / "missing") == 0
