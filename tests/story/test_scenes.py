"""Scene files read by tick: each parsed once while it stays as it is, a hand edit seen."""

from __future__ import annotations

import os

import pytest

from novel_agent.errors import FileFormatError
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


def test_a_scene_of_a_book_with_an_outline_says_where_it_belongs_and_reads_back(tmp_path):
    scene = Scene(tick=3, body="The bell rang.", title="Bells", chapter=2, beat="2.1",
                  beat_status="partly", tension=6, tension_reason="A door she cannot open.")
    path = tmp_path / "scene_003.md"
    path.write_text(scene.render(), encoding="utf-8")
    text = path.read_text(encoding="utf-8")
    assert "chapter: 2\nbeat: '2.1'\nbeat_status: partly\ntension: 6\n" in text
    read = scenes_module.load_scene(path)
    assert (read.chapter, read.beat, read.beat_status, read.tension, read.tension_reason) == \
        (2, "2.1", "partly", 6, "A door she cannot open.")


def test_a_scene_without_an_outline_writes_none_of_its_fields(tmp_path):
    text = Scene(tick=1, body="Rain.", title="Rain").render()
    for key in ("chapter", "beat", "beat_status", "tension", "tension_reason"):
        assert f"\n{key}:" not in text


@pytest.mark.parametrize("line, said", [
    ("tension: 14", "'tension' must be a whole number from 0 to 10, not 14"),
    ("tension: high", "'tension' must be a whole number from 0 to 10, not 'high'"),
    ("chapter: 0", "'chapter' must be a whole number from 1 to 100000, not 0"),
    ("beat: 3.2", "'beat' must be a beat's id in quotes, like '3.2', not 3.2"),
    ("beat: 'three'", "'beat' must be a beat's id in quotes, like '3.2', not 'three'"),
    ("beat_status: maybe", "'beat_status' must be \"done\" or \"partly\" or \"not\", not 'maybe'"),
    ("tension_reason: [a, b]", "'tension_reason' must be one line of text, not ['a', 'b']"),
])
def test_a_bad_value_of_the_outline_fields_is_one_line_naming_the_file_line_and_key(
        tmp_path, line, said):
    path = tmp_path / "scene_004.md"
    path.write_text(f"---\ntick: 4\ntitle: Bells\n{line}\n---\nThe bell rang.\n",
                    encoding="utf-8")
    with pytest.raises(FileFormatError) as caught:
        scenes_module.load_scene(path)
    assert str(caught.value) == f"{path}:4: {said}"
