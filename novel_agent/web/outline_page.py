"""What the Outline page shows, as plain data: the book's arc, acts, chapters and beats,
each done or to come; the tension curve, the outline's target against the tension the
scenes realized, as the points of an inline SVG; the loops with their planned payoffs.

Read through the library as `novel outline show` and `novel status` read it
(story/outline/standing.py: where the book stands from its scenes; story/outline/payoffs.py:
where a loop pays off); each part carries the values and the fingerprint its edit
form starts from (revision/outline_edits.py), and whether it is locked. Pure but for
reading the project's files; writes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from novel_agent.errors import NovelError
from novel_agent.reports.status import outline_status
from novel_agent.revision.outline_edits import FIELDS, fingerprint, part_values
from novel_agent.story.memory.read import load_memory
from novel_agent.story.memory.records import Loop, is_open
from novel_agent.story.outline.curves import target_tension
from novel_agent.story.outline.file import Outline, load_outline
from novel_agent.story.outline.payoffs import planned, spot_of
from novel_agent.story.outline.standing import BookStanding, book_standing
from novel_agent.story.project.folder import Project
from novel_agent.story.scenes import Scene, SceneReader, scene_ticks

# The chart's frame, in SVG units (it scales to the page's width).
WIDTH, HEIGHT = 760, 220
LEFT, RIGHT, TOP, BOTTOM = 34, 10, 12, 30


@dataclass
class Part:
    """One part of the outline as the page shows it, and its edit form's start."""

    address: str                 # "arc", "act:2", "chapter:3", "beat:3.2"
    locked: bool                 # it, or a part holding it, is locked
    values: dict[str, Any]       # its editable fields as the file holds them
    was: str                     # their fingerprint
    state: str = ""              # done | partly | now | missed | overdue | to come


@dataclass
class BeatView(Part):
    id: str = ""
    what: str = ""
    tension: int = 0             # its target: its own, or the curve's at its place
    curve: bool = False          # the tension is the curve's (the file gives none)


@dataclass
class ChapterView(Part):
    number: int = 0
    title: str = ""
    purpose: str = ""
    scenes: int = 0              # its target length
    ticks: list[int] = field(default_factory=list)   # the scenes it holds
    beats: list[BeatView] = field(default_factory=list)


@dataclass
class ActView(Part):
    number: int = 0
    name: str = ""
    summary: str = ""
    chapters: list[ChapterView] = field(default_factory=list)


@dataclass
class LoopView:
    """A plot loop and where it is meant to pay off."""

    id: str
    description: str
    status: str
    payoff: str                  # "chapter 3: The Cold Ledger", "beat 3.2: …", "not yet set"
    due: bool = False
    kept_open: bool = False
    opened_in: int | None = None
    resolved_in: int | None = None


@dataclass
class Chart:
    """The tension chart's geometry, in SVG units: chapters as bands across the planned
    scenes, the target through each beat, each scene's realized tension in its chapter."""

    width: int = WIDTH
    height: int = HEIGHT
    left: int = LEFT
    right: int = WIDTH - RIGHT
    top: int = TOP
    bottom: int = HEIGHT - BOTTOM
    target: str = ""                                  # polyline points "x,y x,y"
    realized: str = ""
    dots: list[tuple[float, float, int, int, int | None]] = field(default_factory=list)
    bands: list[tuple[float, float, int]] = field(default_factory=list)   # x0, x1, chapter
    grid: list[tuple[float, int]] = field(default_factory=list)           # y, tension
    now: float | None = None                          # where the next scene falls


@dataclass
class OutlinePage:
    """The whole page; `outline` False: the project has none (the page says how)."""

    outline: bool = False
    problem: str = ""            # why the outline (or the book) cannot be read
    curve: str = ""
    describe: str = ""
    standing: str = ""           # outline_status's line
    arc: Part | None = None
    summary: str = ""
    ending: str = ""
    acts: list[ActView] = field(default_factory=list)
    chart: Chart | None = None
    rated: int = 0               # scenes with a realized tension
    loops: list[LoopView] = field(default_factory=list)


def outline_page(project: Project, curve: str) -> OutlinePage:
    """The Outline page of `project`, its tension curve `curve` (outline.curve)."""
    try:
        raw = load_outline(project.outline_file)
        if raw is None:
            return OutlinePage()
        scenes = _scenes(project)
        loops = _loops(project)
    except (NovelError, OSError) as exc:
        return OutlinePage(outline=True, problem=str(exc), curve=curve)
    at = book_standing(raw, scenes, curve, loops)
    arc = _part(raw, "arc", raw.arc.locked)
    return OutlinePage(True, "", curve, raw.describe(), outline_status(project, curve), arc,
                       raw.arc.summary, raw.arc.ending, _acts(raw, at, scenes),
                       chart(at, scenes, curve), sum(s.tension is not None for s in scenes),
                       _loop_views(at, loops))


def _scenes(project: Project) -> list[Scene]:
    """The book's scenes that can be read (one that cannot is left out of the page, as
    the tick leaves it: `novel doctor` names it)."""
    reader, scenes = SceneReader(project.scenes_dir), []
    for tick in scene_ticks(project.scenes_dir):
        try:
            scene = reader(tick)      # parsed once per version of its file (and for the status)
        except (NovelError, OSError, ValueError):
            continue
        scenes += [scene] if scene is not None else []
    return scenes


def _loops(project: Project) -> list[Loop]:
    return load_memory(project.memory_dir).loops


def _part(outline: Outline, address: str, locked: bool, state: str = "") -> Part:
    values = part_values(outline, address)
    return Part(address, locked, values, fingerprint(values), state)


def _acts(raw: Outline, at: BookStanding, scenes: list[Scene]) -> list[ActView]:
    """The acts, their chapters and beats, each with its state (see beat_state)."""
    filled = {b.id: b.tension for b in at.outline.beats()}
    held: dict[int, list[int]] = {}
    for scene in scenes:
        if scene.chapter is not None:
            held.setdefault(scene.chapter, []).append(scene.tick)
    s = at.position
    current = s.chapter.number if s.chapter is not None else None
    numbers = [c.number for c in raw.chapters()]
    acts = []
    for n, act in enumerate(raw.acts, 1):
        chapters = []
        for chapter in act.chapters:
            locked = act.locked or chapter.locked
            beats = [BeatView(**vars(_part(raw, f"beat:{b.id}", locked or b.locked,
                                           beat_state(at, b.id))),
                              id=b.id, what=b.what, tension=filled.get(b.id) or 0,
                              curve=b.tension is None) for b in chapter.beats]
            state = chapter_state(chapter.number, current, numbers, [b.state for b in beats],
                                  len(held.get(chapter.number, [])), chapter.scenes)
            chapters.append(ChapterView(**vars(_part(raw, f"chapter:{chapter.number}", locked,
                                                     state)),
                                        number=chapter.number, title=chapter.title,
                                        purpose=chapter.purpose, scenes=chapter.scenes,
                                        ticks=held.get(chapter.number, []), beats=beats))
        states = {c.state for c in chapters}
        state = "now" if "now" in states else "done" if states <= {"done"} else \
            "to come" if states <= {"to come"} else "partly"
        acts.append(ActView(**vars(_part(raw, f"act:{n}", act.locked, state)), number=n,
                            name=act.name, summary=act.summary, chapters=chapters))
    return acts


def beat_state(at: BookStanding, beat_id: str) -> str:
    """"now" (the next scene's beat), "done", "partly", "overdue", "missed" (passed, the
    book gone on) or "to come"."""
    s = at.position
    said = at.beat_status(beat_id)
    if said == "done":
        return "done"
    if any(b.id == beat_id for b in s.missed):
        return "missed"
    if any(b.id == beat_id for b in s.overdue):
        return "overdue"
    if s.beat is not None and s.beat.id == beat_id:
        return "now"
    return "partly" if said == "partly" else "to come"


def chapter_state(number: int, current: int | None, numbers: list[int], beats: list[str],
                  written: int, target: int) -> str:
    """"now" (the next scene's chapter), "done" (its beats done, or the book gone past it
    with them all done; without beats, its length written), "partly" (passed with a beat
    not done) or "to come"."""
    if number == current:
        return "now"
    passed = current is None or numbers.index(number) < numbers.index(current)
    if beats and all(b == "done" for b in beats) or not beats and written >= target:
        return "done"
    return "partly" if passed else "to come"


def chart(at: BookStanding, scenes: list[Scene], curve: str) -> Chart:
    """The tension chart: x runs over the planned scenes, chapter by chapter (a chapter's
    band as wide as its target length); the target goes through each beat's tension at its
    place in its chapter (a chapter without beats: the curve's at its middle); each scene
    written under the outline sits in its chapter's band, in the order written (a chapter
    that took more scenes than planned packs them in)."""
    out = Chart()
    chapters = at.outline.chapters()
    planned_scenes = max(1, at.outline.planned_scenes())
    span = out.right - out.left

    def x(position: float) -> float:
        return round(out.left + span * position / planned_scenes, 1)

    def y(tension: float) -> float:
        return round(out.bottom - (out.bottom - out.top) * tension / 10, 1)

    starts, at_scene = {}, 0
    for chapter in chapters:
        starts[chapter.number] = at_scene
        out.bands.append((x(at_scene), x(at_scene + chapter.scenes), chapter.number))
        at_scene += chapter.scenes
    points = []
    for chapter in chapters:
        start, beats = starts[chapter.number], chapter.beats
        if not beats:
            middle = start + chapter.scenes / 2
            points.append((x(middle), y(target_tension(curve, middle / planned_scenes))))
        for k, beat in enumerate(beats):
            points.append((x(start + (k + 0.5) * chapter.scenes / len(beats)),
                           y(beat.tension or 0)))
    out.target = " ".join(f"{a},{b}" for a, b in points)
    counts: dict[int, int] = {}
    for scene in scenes:
        if scene.chapter is not None and scene.chapter in starts:
            counts[scene.chapter] = counts.get(scene.chapter, 0) + 1
    seen: dict[int, int] = {}
    for scene in scenes:
        number = scene.chapter
        if number is None or number not in starts:
            continue
        i, size = seen.get(number, 0), at.outline.chapter(number).scenes  # type: ignore[union-attr]
        seen[number] = i + 1
        if scene.tension is not None:
            spot = x(starts[number] + (i + 0.5) * size / max(counts[number], size))
            out.dots.append((spot, y(scene.tension), scene.tick, scene.tension,
                             _target_of(at, scene)))
    out.realized = " ".join(f"{a},{b}" for a, b, *_ in out.dots)
    out.grid = [(y(t), t) for t in (0, 5, 10)]
    s = at.position
    if s.chapter is not None and s.chapter.number in starts:
        size = s.chapter.scenes            # where the next scene's dot will be
        out.now = x(starts[s.chapter.number] + (s.written + 0.5) * size / max(s.written + 1, size))
    return out


def _target_of(at: BookStanding, scene: Scene) -> int | None:
    """The target tension of the beat `scene` advanced, as the outline gives it now."""
    beat = at.beat(scene.beat) if scene.beat else None
    return beat.tension if beat is not None else None


def _loop_views(at: BookStanding, loops: list[Loop]) -> list[LoopView]:
    """The loops: those open first, by where they are meant to pay off, then those paid off."""
    outline = at.outline
    due = {str(loop.get("id")) for loop in at.due}
    rows = []
    for n, loop in enumerate(loops):
        opened = loop.get("opened_in")
        rows.append(((not is_open(loop), planned(loop, outline), n), LoopView(
            str(loop.get("id")), str(loop.get("description") or loop.get("id")),
            str(loop.get("status") or "open"), payoff_label(outline, loop.get("payoff")),
            str(loop.get("id")) in due and is_open(loop), loop.get("keep_open") is True,
            opened if isinstance(opened, int) else None,
            loop.get("resolved_in") if isinstance(loop.get("resolved_in"), int) else None)))
    return [view for _, view in sorted(rows, key=lambda r: r[0])]


def payoff_label(outline: Outline, payoff: Any) -> str:
    """Where a loop's payoff is, as the page says it."""
    if payoff is None or str(payoff).strip() == "":
        return "not yet set"
    spot = spot_of(outline, payoff)
    if spot is None:
        return f"{payoff} (not in the outline: the last chapter)"
    chapter = outline.chapters()[spot[0]]
    if spot[1] < 0:
        return f"chapter {chapter.number}: {chapter.title}"
    return f"beat {chapter.beats[spot[1]].id}: {chapter.beats[spot[1]].what}"


def typed_values(form: Mapping[str, Any], address: str) -> dict[str, str]:
    """The fields of part `address` as a form sent them (kept when the edit is refused)."""
    return {key: str(form.get(key) or "") for key in FIELDS.get(address.partition(":")[0], ())}
