"""What a project holds, at a glance: counts for `novel status` and `novel inspect`."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from novel_agent.config.settings import Config
from novel_agent.context.relevance import overdue
from novel_agent.context.tier3 import doc_cost, select_tier3, tier3_budget
from novel_agent.errors import FileFormatError
from novel_agent.models.limits import limits_for
from novel_agent.story.memory.read import load_memory
from novel_agent.story.memory.records import Loop
from novel_agent.story.outline.standing import GO_ON, read_standing
from novel_agent.story.project.folder import Project
from novel_agent.story.scenes import Scene, load_scene, load_scenes, scene_ticks, scene_words
from novel_agent.story.steer import describe as describe_steer
from novel_agent.story.steer import read_steer
from novel_agent.story.summaries import (
    SummaryDoc,
    load_tree,
    pending_ticks,
)
from novel_agent.tick.session import counter_for


@dataclass(frozen=True)
class ProjectStatus:
    """Numbers that describe a project."""

    name: str
    root: Path
    tick: int
    scenes: int
    words: int
    characters: int
    locations: int
    open_loops: int
    resolved_loops: int
    facts: int
    last_scene: Scene | None
    overdue: list[Loop] = field(default_factory=list)   # open loops past loop_overdue_after


def project_status(project: Project, overdue_after: int = 30) -> ProjectStatus:
    """Count what the project's files hold; list the loops open for more than
    `overdue_after` ticks, oldest first."""
    ticks = scene_ticks(project.scenes_dir)
    memory = load_memory(project.memory_dir)
    words = sum(scene_words(project.scene_path(t)) for t in ticks)
    last = load_scene(project.scene_path(ticks[-1])) if ticks else None
    tick = project.tick()       # once: it lists the scenes (it was asked once per open loop)
    return ProjectStatus(
        name=project.name, root=project.root, tick=tick, scenes=len(ticks),
        words=words, characters=len(memory.characters), locations=len(memory.locations),
        open_loops=len(memory.open_loops()),
        resolved_loops=sum(1 for l in memory.loops if l.get("status") == "resolved"),
        facts=len(memory.facts), last_scene=last,
        overdue=sorted((l for l in memory.open_loops() if overdue(l, tick + 1, overdue_after)),
                       key=lambda l: int(l.get("opened_in") or 0)))


def outline_status(project: Project, curve: str) -> str:
    """Where the book stands against its outline ("" for a book without one): "finished:
    3 chapters, 6 scenes, 1,868 words; extend the outline …" (with the loops it left
    open), the ending scenes owed to loops still open past the last beat, or the act, the
    chapter, its current beat, the beats done and the loops due; a broken outline file
    says so."""
    try:
        at = read_standing(project, curve)
    except FileFormatError as exc:
        return f"cannot be read: {exc}"
    if at is None:
        return ""
    if at.finished:
        return f"finished: {at.counts()}{at.loops_line()}; {GO_ON}"
    if at.in_finale:
        left = len(at.loops_open)
        return (f"ending: the last beat has landed, {left} loop{'s' if left != 1 else ''} "
                f"still open; ending scene {at.finale + 1} of at most "
                f"{at.finale + at.finale_left} to pay them off")
    s, outline = at.position, at.outline
    assert s.chapter is not None
    acts, chapters, beats = len(outline.acts), len(outline.chapters()), len(outline.beats())
    act = next((n for n, a in enumerate(outline.acts, 1) if a == s.act), 0)
    done = sum(1 for b in outline.beats() if at.beat_status(b.id) == "done")
    where = (f"act {act} of {acts}, chapter {s.chapter.number} of {chapters} "
             f"\"{s.chapter.title}\" (scene {s.written + 1} of {s.chapter.scenes})")
    beat = f", beat {s.beat.id}" if s.beat is not None else ""
    missed = f", {len(s.missed)} missed" if s.missed else ""
    overdue = f", {len(s.overdue)} overdue" if s.overdue else ""
    due = f"; {len(at.due)} loop{'s' if len(at.due) != 1 else ''} due" if at.due else ""
    return f"{where}{beat}; {done} of {beats} beats done{missed}{overdue}{due}"


def steer_status(project: Project) -> str:
    """The author's note as the next tick will see it (or why it cannot be read)."""
    try:
        note = read_steer(project.steer_file)
    except FileFormatError as exc:
        return f"unreadable: {exc}"
    return describe_steer(note, project.tick() + 1, project.state())


def folder_tree(root: Path, *, max_files: int = 3) -> list[str]:
    """The project folder as a short tree: each folder with its file count, a few names."""
    lines = [f"{root.name}/"]

    def walk(folder: Path, depth: int) -> None:
        entries = sorted(folder.iterdir(), key=lambda p: (p.is_file(), p.name))
        dirs = [p for p in entries if p.is_dir() and p.name not in ("txn", "__pycache__")]
        files = [p for p in entries if p.is_file() and not p.name.startswith(".")]
        pad = "  " * depth
        for d in dirs:
            count = sum(1 for p in d.rglob("*") if p.is_file() and not p.name.startswith("."))
            lines.append(f"{pad}{d.name}/  ({count} file{'s' if count != 1 else ''})")
            if depth < 2:
                walk(d, depth + 1)
        for f in files[:max_files]:
            lines.append(f"{pad}{f.name}  {_size(f.stat().st_size)}")
        if len(files) > max_files:
            lines.append(f"{pad}… {len(files) - max_files} more")

    walk(root, 1)
    return lines


def _size(n: int) -> str:
    return f"{n} B" if n < 1024 else f"{n / 1024:.1f} KB"


@dataclass(frozen=True)
class SummaryLevel:
    """One level of the summary tree: how many docs, what they cover, what they cost."""

    label: str            # "checkpoints", "arcs L1", ..., "overall"
    docs: int
    first: int
    last: int
    tokens: int           # summary tokens, counted now
    scene_tokens: int     # tokens of the scenes those docs cover

    @property
    def compression(self) -> float:
        """Scene tokens covered per summary token."""
        return self.scene_tokens / self.tokens if self.tokens else 0.0


@dataclass(frozen=True)
class SummaryStatus:
    """The summary tree at a glance, and what tier 3 takes from it now."""

    levels: list[SummaryLevel]
    tier3: list[SummaryDoc]
    tier3_tokens: int
    budget: int
    pending: list[int]
    edited: list[str]


def summary_status(project: Project, config: Config) -> SummaryStatus:
    """Levels, ranges, tokens and compression of the summary tree (see summaries.py)."""
    tree = load_tree(project.summaries_dir)
    count = counter_for(config).count

    def scene_tokens(doc: SummaryDoc) -> int:
        if isinstance(doc.meta.get("source_tokens"), int):
            return doc.meta["source_tokens"]
        ticks = list(range(doc.first, doc.last + 1))
        return sum(count(s.body) for s in load_scenes(project.scenes_dir, ticks))

    per_checkpoint = {d.name: scene_tokens(d) for d in tree.checkpoints()}

    def covered(doc: SummaryDoc) -> int:
        if doc.kind == "checkpoint":
            return per_checkpoint[doc.name]
        if doc.kind == "arc" and isinstance(doc.meta.get("source_tokens"), int):
            return doc.meta["source_tokens"]
        return sum(n for name, n in per_checkpoint.items()
                   if doc.first <= tree.docs[name].first and tree.docs[name].last <= doc.last)

    groups: dict[int, list[SummaryDoc]] = {}
    for doc in [*tree.docs.values(), *([tree.overall] if tree.overall else [])]:
        groups.setdefault(doc.level, []).append(doc)
    levels = []
    for level in sorted(groups, key=lambda n: (n < 0, n)):
        docs = groups[level]
        label = "checkpoints" if level == 0 else ("overall" if level < 0 else f"arcs L{level}")
        levels.append(SummaryLevel(label, len(docs), min(d.first for d in docs),
                                   max(d.last for d in docs), sum(count(d.body) for d in docs),
                                   sum(covered(d) for d in docs)))
    budget = tier3_budget(config, limits_for(config))
    chosen = select_tier3(tree, budget, count)
    edited = [d.name for d in [*tree.docs.values(), tree.overall] if d is not None and d.edited]
    return SummaryStatus(levels, chosen, sum(doc_cost(d, count) for d in chosen), budget,
                         pending_ticks(project, config, tree), sorted(edited))


def recall_status(state: dict) -> str:
    """The recall probe over the last ticks: the share of the facts relevant to each scene
    that reached its writer's prompt."""
    rows = [r for r in state.get("recall") or [] if r[1]]
    if not rows:
        return "no tick has had a known fact about its scene yet"
    relevant, reached = sum(r[1] for r in rows), sum(r[2] for r in rows)
    last = rows[-1]
    return (f"{reached / relevant:.0%} of the facts relevant to each scene reached its writer "
            f"over the last {len(rows)} tick{'s' * (len(rows) != 1)} "
            f"(tick {last[0]}: {last[2]} of {last[1]})")
