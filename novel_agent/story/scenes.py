"""Scenes: the prose files `scenes/scene_NNN.md` and their front matter.

A scene of a book with an outline also says where it belongs (`chapter`, the `beat` its
plan advanced) and what the extractor found (`beat_status`: done, partly or not; its
`tension`, 0-10, and `tension_reason`): written only when set, so the scenes of a book
without an outline are as they always were, and checked when read (a bad value is a
FileFormatError naming the file, the line and the key).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from stat import S_ISREG
from typing import Any

from novel_agent.errors import FileFormatError
from novel_agent.files import read_bytes, read_front_matter, read_yaml, render_front_matter

SCENE_RE = re.compile(r"^scene_(\d+)\.md$")
BEAT_STATUSES = ("done", "partly", "not")     # whether a scene's beat happened in it
BEAT_ID = re.compile(r"^\d+\.\d+$")            # "3.2": chapter 3's second beat


@dataclass(frozen=True)
class Scene:
    """One written scene, as its file holds it."""

    tick: int
    body: str
    title: str = ""
    pov: str = ""
    location: str = ""
    characters: list[str] = field(default_factory=list)
    summary: list[str] = field(default_factory=list)
    words: int = 0
    tokens: int = 0
    path: Path | None = None
    pinned: bool = False            # `pinned: true` by hand: retrieval may bring it back whole
    # Of a book with an outline (left out of the file when not set):
    chapter: int | None = None      # the outline's chapter the scene belongs to
    beat: str = ""                  # the beat its plan advanced ("3.2")
    beat_status: str = ""           # whether the beat happened in it: done | partly | not
    tension: int | None = None      # its tension as the extractor rated it, 0-10
    tension_reason: str = ""        # why, in one line

    def front_matter(self) -> dict[str, Any]:
        meta = {
            "tick": self.tick,
            "title": self.title,
            "pov": self.pov,
            "location": self.location,
            "characters": list(self.characters),
            "summary": list(self.summary),
            "words": self.words,
            "tokens": self.tokens,
        }
        if self.pinned:
            meta["pinned"] = True
        shape = {"chapter": self.chapter, "beat": self.beat, "beat_status": self.beat_status,
                 "tension": self.tension, "tension_reason": self.tension_reason}
        return meta | {key: value for key, value in shape.items() if value not in (None, "")}

    def render(self) -> str:
        """The scene as markdown with front matter."""
        return render_front_matter(self.front_matter(), self.body)

    def summary_text(self) -> str:
        """The summary bullets as markdown lines."""
        return "\n".join(f"- {b}" for b in self.summary)


def word_count(text: str) -> int:
    """Words in prose (markdown marks are not words)."""
    return len(re.findall(r"[\w'’-]+", text))


def scene_files(scenes_dir: Path) -> list[Path]:
    """The scene files present (any number of digits), in tick order."""
    if not scenes_dir.is_dir():
        return []
    found = [(int(m.group(1)), p) for p in scenes_dir.iterdir() if (m := SCENE_RE.match(p.name))]
    return [p for _, p in sorted(found)]


def scene_ticks(scenes_dir: Path) -> list[int]:
    """Ticks of the scene files present, in order (one listing, no path made per file:
    asked several times a tick)."""
    try:
        names = os.listdir(scenes_dir)
    except (FileNotFoundError, NotADirectoryError):
        return []
    return sorted(int(m.group(1)) for m in map(SCENE_RE.match, names) if m)


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, list):
        return [str(v) for v in value if v is not None]
    return [str(value)]


def _tick_of(path: Path, meta: dict[str, Any]) -> int:
    """The scene's tick: its file name's number; a front-matter `tick` must agree with it."""
    match = SCENE_RE.match(Path(path).name)
    named = int(match.group(1)) if match else None
    given = meta.get("tick")
    if given is None or (named is not None and given == named):
        return named if named is not None else 0
    if isinstance(given, bool) or not isinstance(given, int):
        raise FileFormatError(f"'tick' must be a number, not {given!r}", file=str(path),
                              line=_meta_line(path, "tick"))
    if named is not None:
        raise FileFormatError(f"front matter says tick {given} but the file name says "
                              f"{named}: the file name is the tick; fix or remove the "
                              "'tick:' line", file=str(path), line=_meta_line(path, "tick"))
    return given


def _meta_line(path: Path, key: str) -> int | None:
    try:
        lines = read_bytes(path).decode("utf-8").splitlines()
    except (OSError, UnicodeDecodeError, FileFormatError):
        return None
    return next((n + 1 for n, line in enumerate(lines) if line.startswith(f"{key}:")), None)


def last_tick(scenes_dir: Path) -> int:
    """The highest tick among the scene files (0 when there are none)."""
    ticks = scene_ticks(scenes_dir)
    return ticks[-1] if ticks else 0


def load_scene(path: Path) -> Scene:
    """Read a scene file; a hand edit that broke the front matter gives FileFormatError.

    Counts (`words`) are recomputed from the body, so an edited scene is seen as it is.
    """
    meta, body = read_front_matter(path)
    tick = _tick_of(path, meta)
    return Scene(
        tick=tick,
        body=body,
        title=str(meta.get("title") or ""),
        pov=str(meta.get("pov") or ""),
        location=str(meta.get("location") or ""),
        characters=_as_list(meta.get("characters")),
        summary=_as_list(meta.get("summary")),
        words=word_count(body),
        tokens=int(meta.get("tokens") or 0) if str(meta.get("tokens") or "0").isdigit() else 0,
        path=Path(path),
        pinned=meta.get("pinned") is True,
        **_shape(path, meta),
    )


def _shape(path: Path, meta: dict[str, Any]) -> dict[str, Any]:
    """Where the scene belongs in the outline and what its extractor found, as its front
    matter says (each key checked; a bad value is a FileFormatError naming file and key)."""
    out: dict[str, Any] = {}

    def bad(key: str, wanted: str) -> FileFormatError:
        return FileFormatError(f"'{key}' must be {wanted}, not {meta[key]!r}", file=str(path),
                               line=_meta_line(path, key))

    for key, low, high in (("chapter", 1, 100_000), ("tension", 0, 10)):
        value = meta.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise bad(key, f"a whole number from {low} to {high}")
        out[key] = value
    beat = meta.get("beat")
    if beat is not None:
        if not isinstance(beat, str) or not BEAT_ID.match(beat):
            raise bad("beat", "a beat's id in quotes, like '3.2'")
        out["beat"] = beat
    status = meta.get("beat_status")
    if status is not None:
        if status not in BEAT_STATUSES:
            raise bad("beat_status", " or ".join(f'"{s}"' for s in BEAT_STATUSES))
        out["beat_status"] = status
    reason = meta.get("tension_reason")
    if reason is not None:
        if not isinstance(reason, str):
            raise bad("tension_reason", "one line of text")
        out["tension_reason"] = " ".join(reason.split())
    return out


def load_scenes(scenes_dir: Path, ticks: list[int] | None = None) -> list[Scene]:
    """Load the given ticks' scenes (all when None), in order; missing ones are skipped."""
    wanted = scene_ticks(scenes_dir) if ticks is None else ticks
    out = []
    for tick in wanted:
        path = scenes_dir / f"scene_{tick:03d}.md"
        if path.is_file():
            out.append(load_scene(path))
    return out


# Scenes parsed, each kept while its file's inode, size and mtime stay the same (as
# memory's parse cache): the scenes a tick reads again (the last 30 titles, the last few
# scenes' text, the recent tiers) are parsed once, not once a tick.
_PARSED: dict[str, tuple[tuple[int, int, int], Scene]] = {}
PARSED_KEPT = 5_000


def _kept_scene(path: Path) -> Scene | None:
    """The scene at `path` (None when there is none), parsed once per version of it."""
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    if not S_ISREG(st.st_mode):
        return None
    stamp, key = (st.st_ino, st.st_size, st.st_mtime_ns), str(path)
    hit = _PARSED.get(key)
    if hit is not None and hit[0] == stamp:
        return hit[1]
    scene = load_scene(path)
    if len(_PARSED) >= PARSED_KEPT:
        _PARSED.clear()
    _PARSED[key] = (stamp, scene)
    return scene


class SceneReader:
    """Scenes by tick, each asked once in the reader's life (make one per tick) and its
    file parsed once while it stays as it is."""

    def __init__(self, scenes_dir: Path):
        self.scenes_dir = scenes_dir
        self._scenes: dict[int, Scene | None] = {}

    def __call__(self, tick: int) -> Scene | None:
        if tick not in self._scenes:
            self._scenes[tick] = _kept_scene(self.scenes_dir / f"scene_{tick:03d}.md")
        return self._scenes[tick]

    def recent(self, last: int, count: int) -> list[Scene]:
        """The newest `count` scenes up to `last`, oldest first."""
        return [s for s in (self(t) for t in range(max(1, last - count + 1), last + 1)) if s]


def scene_words(path: Path) -> int:
    """Words of a scene as its file holds it now (a hand edit counts, as in load_scene)."""
    return word_count(read_front_matter(path)[1])


def scene_key(tick: int) -> str:
    """The key of scene `tick` among a prompt's items and in its report: "scene_004"."""
    return f"scene_{tick:03d}"


def key_tick(key: str) -> int:
    """The tick a scene's item key names (see scene_key)."""
    return int(key.removeprefix("scene_"))


def recorded_mends(plan_path: Path) -> list[tuple[str, str]]:
    """The sentences the mend wrote again in a scene, each (before, after), as its plan
    record keeps them (`prose.mends`); none for a record without them or that is not
    there (a record that cannot be read is a FileFormatError naming it)."""
    if not plan_path.is_file():
        return []
    record = read_yaml(plan_path, {}) or {}
    prose = record.get("prose") if isinstance(record, dict) else None
    said = prose.get("mends") if isinstance(prose, dict) else None
    return [(str(m.get("before", "")), str(m.get("after", ""))) for m in said or []
            if isinstance(m, dict)]

