"""What each page of `novel serve` shows, read through the library as plain data.

Every function takes a Project (and what else it needs) and returns dataclasses or
dicts for a template; none writes a file. The book is read a page of scenes at a
time (`PAGE_SCENES`), so a 1,000-scene book costs what a 20-scene one does.
"""

from __future__ import annotations

import bisect
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from novel_agent.books.export import Chapter, chapters_of
from novel_agent.books.markdown import blocks, blocks_html
from novel_agent.config.settings import Config
from novel_agent.config.stages import ticked
from novel_agent.context.relevance import overdue
from novel_agent.daemon.heartbeat import Heartbeat, error_line, read_heartbeat, running
from novel_agent.errors import NovelError, ProjectError
from novel_agent.files import read_text, read_yaml
from novel_agent.index.ledger import ledger_path
from novel_agent.reports.costs import money, totals
from novel_agent.reports.prose import ECHO_SCENES, STYLE_FILE
from novel_agent.reports.stats import Stats, collect_stats, read_log, summary
from novel_agent.reports.status import steer_status
from novel_agent.reports.usage import project_rows, usage_report
from novel_agent.story.lore import load_lorebook
from novel_agent.story.memory.read import load_memory
from novel_agent.story.memory.records import is_open
from novel_agent.story.project.folder import Project
from novel_agent.story.scenes import Scene, load_scene, load_scenes, scene_ticks, scene_words
from novel_agent.story.steer import read_steer
from novel_agent.story.summaries import load_tree
from novel_agent.tick.pipeline import preview
from novel_agent.tick.session import Session

PAGE_SCENES = 20
FACTS_SHOWN = 200


# -- the library ----------------------------------------------------------------
@dataclass
class LibraryRow:
    """One project as the library lists it."""

    name: str
    ticks: int = 0
    scenes: int = 0
    words: int = 0
    daemon: str = "not running"
    running: bool = False
    last_error: str = ""
    cost: str = ""
    problem: str = ""          # why the project could not be read


def daemon_state(beat: Heartbeat | None) -> tuple[bool, str]:
    """(running, one phrase) from the heartbeat."""
    if beat is None:
        return False, "never run"
    if running(beat):
        return True, f"running (pid {beat.pid}): {beat.state}, {beat.ticks} ticks this run"
    if beat.state in ("stopped", "failed"):
        return False, f"{beat.state} at {beat.ended or '?'} after {beat.ticks} ticks"
    return False, f"ended without a word (pid {beat.pid}), killed?"


def daemon_view(beat: Heartbeat | None) -> tuple[bool, str, str]:
    """(running, one phrase, the last error with its tick and whether it is fixed)."""
    return (*daemon_state(beat), error_line(beat) if beat and beat.last_error else "")


def book_words(project: Project, cache: dict[Path, tuple[int, int, int]]) -> tuple[int, int]:
    """(scenes, words) of the book as its files hold it now; a scene's count is kept in
    `cache` by its file's mtime and size, so only a new or edited scene is read again."""
    ticks = scene_ticks(project.scenes_dir)
    words = 0
    for tick in ticks:
        path = project.scene_path(tick)
        stat = path.stat()
        known = cache.get(path)
        if known is None or known[:2] != (stat.st_mtime_ns, stat.st_size):
            known = cache[path] = (stat.st_mtime_ns, stat.st_size, scene_words(path))
        words += known[2]
    return len(ticks), words


def library_row(project: Project, cache: dict[Path, tuple[int, int, int]],
                env: Mapping[str, str]) -> LibraryRow:
    """The project's state: ticks, words, daemon, last error, cost so far (`cache`: see
    book_words); or, when its project.yaml (the story, the configuration over `env`) or
    another file cannot be read, the one line saying why."""
    row = LibraryRow(project.name)
    try:
        project.story()
        project.config(env=env)
        row.ticks = project.tick()
        row.scenes, row.words = book_words(project, cache)
        row.running, row.daemon, row.last_error = daemon_view(read_heartbeat(project))
        spent = totals(project_rows(project))
        row.cost = money(spent.cost) if spent.calls else "no calls yet"
    except (NovelError, OSError) as exc:
        row.problem = str(exc)
    return row


# -- the book ---------------------------------------------------------------------
@dataclass(frozen=True)
class SceneProblem:
    """A scene file that cannot be read (its front matter broken by hand), as a page lists
    it in the scene's place: its tick and the one line saying why."""

    tick: int
    problem: str


def readable_scenes(project: Project, ticks: list[int]) -> tuple[list[Scene], list[SceneProblem]]:
    """The scenes of `ticks` that can be read (in order; missing ones skipped), and each
    that cannot, with why: one broken scene is a line on a page, not the page's failure."""
    scenes, problems = [], []
    for tick in ticks:
        try:
            scenes += load_scenes(project.scenes_dir, [tick])
        except (NovelError, OSError, ValueError) as exc:
            problems.append(SceneProblem(tick, f"scene {tick} cannot be read: {exc}"))
    return scenes, problems


@dataclass
class BookPage:
    """One page of the book: its scenes cut into chapters, and where the others are."""

    page: int
    pages: int
    chapters: list[Chapter]
    html: dict[int, str]                 # tick -> the scene's body as HTML
    contents: list[tuple[str, int, int]] = field(default_factory=list)  # title, tick, page
    scenes: int = 0
    problems: list[SceneProblem] = field(default_factory=list)   # its scenes that cannot be read


def scene_html(scene: Scene) -> str:
    """A scene's body as escaped HTML paragraphs."""
    return "\n".join(blocks_html(blocks(scene.body, scene.title), "h4"))


def page_of(ticks: list[int], tick: int) -> int:
    """The book page holding `tick` (or the next scene after it)."""
    return min(bisect.bisect_left(ticks, tick), max(len(ticks) - 1, 0)) // PAGE_SCENES + 1


def book_page(project: Project, page: int) -> BookPage:
    """Page `page` (1-based) of the book: PAGE_SCENES scenes, chapters at the outline's
    chapters in a book with one, else at the checkpoints; a page past the end is a ProjectError."""
    ticks = scene_ticks(project.scenes_dir)
    pages = max(1, -(-len(ticks) // PAGE_SCENES))
    if not 1 <= page <= pages:
        raise ProjectError(f"no page {page}: the book has {pages} page"
                           f"{'s' if pages != 1 else ''}", path=str(project.scenes_dir))
    wanted = ticks[(page - 1) * PAGE_SCENES: page * PAGE_SCENES]
    scenes, problems = readable_scenes(project, wanted)
    chapters = chapters_of(project, scenes, "auto") if scenes else []
    points = load_tree(project.summaries_dir).checkpoints()
    contents = [(f"Chapter {n} (scenes {d.first}–{d.last})", d.first, page_of(ticks, d.first))
                for n, d in enumerate(points, 1)]
    after = points[-1].last if points else 0
    if ticks and ticks[-1] > after:
        first = ticks[bisect.bisect_right(ticks, after)]
        contents.append((f"Chapter {len(points) + 1} (scenes {first}–{ticks[-1]})", first,
                         page_of(ticks, first)))
    return BookPage(page, pages, chapters, {s.tick: scene_html(s) for s in scenes}, contents,
                    len(ticks), problems)


@dataclass
class ScenePage:
    """A scene with its plan, its summary bullets and what it changed in memory."""

    scene: Scene
    html: str
    plan: dict[str, Any]
    memory_changes: list[str]
    previous: int | None
    next: int | None
    book_page: int


def scene_page(project: Project, tick: int) -> ScenePage:
    """Scene `tick` and plans/plan_NNN.yaml; a missing scene is a ProjectError."""
    path = project.scene_path(tick)
    if not path.is_file():
        raise ProjectError(f"no scene {tick} in {project.name}", path=str(path))
    scene = load_scene(path)
    plan = read_yaml(project.plan_path(tick), {}) or {}
    plan = plan if isinstance(plan, dict) else {}
    ticks = scene_ticks(project.scenes_dir)
    at = ticks.index(tick)
    return ScenePage(scene, scene_html(scene), plan, [str(c) for c in plan.get("memory_changes")
                                                       or []],
                     ticks[at - 1] if at else None, ticks[at + 1] if at + 1 < len(ticks) else None,
                     at // PAGE_SCENES + 1)


# -- memory and lore ------------------------------------------------------------------
def memory_page(project: Project, overdue_after: int) -> dict[str, Any]:
    """Characters, places, loops (age, overdue), relationships and the newest facts, each
    with the scenes that made them."""
    memory = load_memory(project.memory_dir)
    now = project.tick() + 1
    loops = []
    for loop in sorted(memory.loops, key=lambda l: (not is_open(l),
                                                     int(l.get("opened_in") or 0))):
        opened = int(loop.get("opened_in") or 0)
        loops.append({**loop, "age": now - opened if opened else None,
                      "overdue": overdue(loop, now, overdue_after), "open": is_open(loop)})
    facts = list(reversed(memory.facts))
    return {"characters": sorted(memory.characters.values(), key=lambda c: str(c.get("name"))),
            "locations": sorted(memory.locations.values(), key=lambda c: str(c.get("name"))),
            "loops": loops, "relationships": memory.relationships,
            "facts": facts[:FACTS_SHOWN], "facts_total": len(facts),
            "overdue_after": overdue_after}


def lore_page(project: Project) -> dict[str, Any]:
    """The lorebook's entries (by priority) and its problems, each with its file's name."""
    book = load_lorebook(project.lore_dir)
    entries = sorted(book.entries, key=lambda e: (-e.priority, e.key))
    return {"entries": [(e, Path(e.source).name) for e in entries], "problems": book.problems}


def lore_file_text(project: Project, file_name: str) -> str:
    """The text of lore/FILE_NAME (a name from lore_page, looked up among the lore files)."""
    for path in sorted(project.lore_dir.glob("*.y*ml")):
        if path.name == file_name:
            return read_text(path)
    raise ProjectError(f"no lore file '{file_name}' in {project.lore_dir}",
                       path=str(project.lore_dir))


# -- steer ---------------------------------------------------------------------------
def steer_page(project: Project) -> dict[str, Any]:
    """The note as written, when it is in force, and since which tick it is read."""
    try:
        note = read_steer(project.steer_file)
    except NovelError as exc:
        return {"text": "", "until": "", "ticks": "", "status": f"unreadable: {exc}",
                "since": None}
    state = project.state()
    kept = state.get("steer")
    mark = kept if isinstance(kept, dict) else {}
    since = mark.get("since") if mark.get("sha1") == note.sha1 else None
    return {"text": note.text, "until": note.until or "", "ticks": note.ticks or "",
            "status": steer_status(project), "since": since, "next_tick": project.tick() + 1,
            "last_read": last_read(project)}


def last_read(project: Project) -> tuple[int, bool] | None:
    """(the last tick, whether its writer's prompt held an author's note), from its log."""
    tick = project.tick()
    report = read_log(project.log_dir / f"tick_{tick:03d}_writer.json") if tick else None
    if report is None:
        return None
    held = any(s.get("name") == "steer" and s.get("tokens") for s in report.get("sections", []))
    return tick, held


# -- context and numbers ---------------------------------------------------------------
def context_page(project: Project, config: Config, env: Mapping[str, str],
                 stage: str) -> dict[str, Any]:
    """What `novel context --stage STAGE` shows: the report and the messages (no LLM)."""
    if stage not in ticked():
        raise ProjectError(f"no stage '{stage}': use one of {', '.join(ticked())}", path=stage)
    with Session.open(project, config, env, stand_in=True) as session:
        built = preview(session, stage)
    report = built.report
    budget = max(report["budget"], 1)
    bars = [{"name": s["name"], "title": s["title"], "tokens": s["tokens"],
             "share": s["tokens"] / budget, "pinned": s["pinned"],
             "count": len(s["items"])} for s in report["sections"] if s["tokens"]]
    return {"report": report, "bars": bars, "messages": built.messages, "stage": stage}


def _mark(path: Path) -> tuple[int, int]:
    try:
        stat = path.stat()
        return stat.st_mtime_ns, stat.st_size
    except OSError:
        return 0, 0


def _stats_mark(project: Project) -> tuple:
    """What changes when `novel stats`' numbers may have: ticks, logs, summaries, ledger,
    scenes, style.yaml."""
    return (project.tick(), _mark(project.log_dir), _mark(project.summaries_dir),
            _mark(ledger_path(project)), _mark(project.scenes_dir),
            _mark(project.root / STYLE_FILE))


def project_stats(project: Project, config: Config, cache: dict[Any, tuple]) -> Stats:
    """`novel stats`'s numbers (stats.collect_stats), made again only when a tick, a prompt
    log, a summary or the ledger changed since the last time (`cache`: root -> (mark,
    Stats)). They read every prompt log: 3 s for 1,000 ticks."""
    mark = _stats_mark(project)
    known = cache.get(project.root)
    if known is None or known[0] != mark:
        known = cache[project.root] = (mark, collect_stats(project, config,
                                                           project_rows(project)))
    return known[1]


def numbers_page(project: Project, config: Config, cache: dict[Any, tuple]) -> dict[str, Any]:
    """What `novel stats` and `novel usage` print: per-measure figures and the table."""
    stats = project_stats(project, config, cache)
    report = usage_report(project, config, project_rows(project))
    return {"stats": stats, "summary": summary(stats), "usage": report,
            "money": money, "echo_scenes": ECHO_SCENES}


def stats_png(project: Project, config: Config, cache: dict[Any, tuple]) -> bytes:
    """`novel stats --plot`'s page of charts as PNG (needs the plot extra; a PNG of a
    1,000-tick book is a third of its SVG), drawn again only when the numbers changed."""
    from novel_agent.reports.plot import plot_stats
    stats = project_stats(project, config, cache)
    known = cache.get((project.root, "png"))
    if known is None or known[0] is not stats:
        with tempfile.TemporaryDirectory() as folder:
            known = cache[(project.root, "png")] = (
                stats, plot_stats(stats, Path(folder) / "stats.png").read_bytes())
    return known[1]
