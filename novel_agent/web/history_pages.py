"""What the writer's room's History, Branches and Search pages show, read through the
library (history/, index/) as plain data for a template; nothing here writes a file.

An entry's diff is git's, word by word (`--word-diff=porcelain`: a scene's paragraph
is one line, and a revision changes a few words of it), parsed into rows of segments
the template escapes; `.novel/` (the counter, the prompt logs) is left out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from novel_agent.errors import ProjectError
from novel_agent.history.branches import Branch, branches
from novel_agent.history.git import HistoryError
from novel_agent.history.rewind import UNDO
from novel_agent.history.store import SCENE_FILE_RE, Entry, History, describe
from novel_agent.index.documents import KINDS
from novel_agent.index.search import Row, points_to, search
from novel_agent.index.sync import open_index
from novel_agent.story.project.folder import Project

LOG_PAGE = 50           # entries a page of the log shows (git works out what each changed)
DIFF_ROWS = 4000        # lines an entry's diff shows (a hand edit of the whole book is more)
SEARCH_LIMIT = 50
SHA_RE = re.compile(r"^[0-9a-f]{7,40}$")
HUNK_RE = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)")
# the order an entry's files are shown in: the prose first, the planner's notes last
FOLDER_ORDER = ("scenes", "summaries", "memory", "lore")


# -- the log ----------------------------------------------------------------------------
@dataclass
class LogRow:
    """One entry as the log lists it; `last_of_tick`: the entry a rewind, a redo or a
    branch at its tick goes to (the newest of its tick)."""

    entry: Entry
    what: str
    last_of_tick: bool
    head: bool


@dataclass
class LogPage:
    """A page of `novel log`: the branch, its entries newest first, the undo point."""

    state: str = ""                  # why there are no entries ("" when there is a history)
    branch: str = ""
    head: Entry | None = None
    rows: list[LogRow] = field(default_factory=list)
    page: int = 1
    more: bool = False
    undo: Entry | None = None        # where an undo of the last rewind takes the branch


def history_state(history: History) -> str:
    """Why a project's history cannot be read ("" when it can), as `novel status` says."""
    if not history.available:
        return "off: git is not on PATH (install git)"
    if not history.git.exists() or history.git.resolve("HEAD") is None:
        return "none yet: it begins at the next tick"
    return ""


def log_page(project: Project, page: int = 1) -> LogPage:
    """The log's page `page` (LOG_PAGE entries each), with what the log's actions need."""
    history = History(project)
    state = history_state(history)
    if state:
        return LogPage(state=state)
    page = max(1, page)
    start = (page - 1) * LOG_PAGE
    before = 1 if start else 0              # the entry before the page: is the first the
    entries = history.entries(limit=LOG_PAGE + 1 + before, skip=start - before)   # newest
    head = history.head()                                                   # of its tick?
    rows, newer = [], entries[0].tick if before and entries else None
    for entry in entries[before:before + LOG_PAGE]:
        rows.append(LogRow(entry, describe(entry.changed), entry.tick != newer,
                           entry.sha == head.sha))
        newer = entry.tick
    branch = history.git.branch()
    undo = history.git.resolve(f"{UNDO}/{branch}")
    return LogPage(branch=branch, head=head, rows=rows, page=page,
                   more=len(entries) > before + LOG_PAGE,
                   undo=history.head(undo) if undo else None)


# -- an entry's diff ----------------------------------------------------------------------
@dataclass
class DiffFile:
    """One file of a diff: its path, whether the entry added or deleted it, and its rows
    (each a list of (mark, text): " " kept, "+" added, "-" taken out, "@" a hunk's line
    number)."""

    path: str
    status: str = ""
    rows: list[list[tuple[str, str]]] = field(default_factory=list)

    @property
    def scene(self) -> int | None:
        """The scene's tick, when the file is a scene."""
        found = SCENE_FILE_RE.match(self.path)
        return int(found.group(1)) if found else None


@dataclass
class EntryDiff:
    """An entry and what it changed."""

    entry: Entry
    files: list[DiffFile]
    left_out: int = 0                # rows past DIFF_ROWS, not shown
    others: list[str] = field(default_factory=list)     # files of .novel/ it changed


def _path(text: str) -> str:
    text = text.strip()
    if text.startswith('"') and text.endswith('"'):        # git quotes an odd name
        text = text[1:-1].encode("latin-1", "backslashreplace").decode("unicode_escape")
    return text[2:] if text[:2] in ("a/", "b/") else text


def parse_word_diff(text: str) -> list[DiffFile]:
    """git's `diff --word-diff=porcelain` as files of rows of segments."""
    files: list[DiffFile] = []
    file: DiffFile | None = None
    header = False
    row: list[tuple[str, str]] = []
    for line in text.split("\n"):
        if line.startswith("diff --git "):
            file, header, row = DiffFile(_path(line[11:].partition(" b/")[0])), True, []
            files.append(file)
        elif file is None:
            continue
        elif header and not line.startswith("@@"):
            if line.startswith("new file"):
                file.status = "added"
            elif line.startswith("deleted file"):
                file.status = "deleted"
            elif line.startswith(("--- ", "+++ ")) and line[4:] != "/dev/null":
                file.path = _path(line[4:])
            elif line.startswith("Binary files"):
                file.rows.append([("@", "a binary file: not shown")])
        elif line.startswith("@@"):
            header = False
            found = HUNK_RE.match(line)
            file.rows.append([("@", f"line {found.group(1)}" if found else line)])
        elif line == "~":
            file.rows.append(row)
            row = []
        elif line[:1] in (" ", "+", "-"):
            row.append((line[0], line[1:]))
    return files


def _order(file: DiffFile) -> tuple[int, str]:
    folder = file.path.split("/")[0]
    rank = FOLDER_ORDER.index(folder) if folder in FOLDER_ORDER else len(FOLDER_ORDER) + (
        folder == "plans")
    return rank, file.path


def entry_diff(project: Project, sha: str) -> EntryDiff:
    """Entry `sha` (as the log links it) and its diff against the entry before it;
    HistoryError when there is no such entry."""
    history = History(project)
    full = history.git.resolve(sha) if SHA_RE.match(sha) and not history_state(history) \
        else None
    if full is None:
        raise HistoryError(f"no history entry '{sha}' in {project.name}",
                           path=str(history.git.git_dir))
    entry = history.head(full)
    entry.changed = history.git.text("diff-tree", "-r", "--no-commit-id", "--name-only",
                                     "--root", full).splitlines()
    text = history.diff(history.before(full), full, (".", ":(exclude).novel"), words=True)
    files, shown = sorted(parse_word_diff(text), key=_order), 0
    for file in files:
        room = max(0, DIFF_ROWS - shown)
        shown += len(file.rows)
        file.rows = file.rows[:room]
    return EntryDiff(entry, files, max(0, shown - DIFF_ROWS),
                     [p for p in entry.changed if p.startswith(".novel/")])


# -- branches ----------------------------------------------------------------------------
@dataclass
class BranchesPage:
    state: str = ""
    branches: list[Branch] = field(default_factory=list)
    tick: int = 0                    # where the project is (a new branch starts there)


def branches_page(project: Project) -> BranchesPage:
    """Every branch, the current one marked."""
    state = history_state(History(project))
    if state:
        return BranchesPage(state=state)
    found = branches(project)
    here = next((b for b in found if b.current), None)
    return BranchesPage(branches=found, tick=here.head.tick if here else project.tick())


# -- search ------------------------------------------------------------------------------
MEMORY_ANCHORS = {"character": "characters", "location": "places", "loop": "loops",
                  "relationship": "relationships"}


@dataclass
class Hit:
    """One search result and where it leads: a scene (`scene`), a section of the Memory
    page (`memory`), a lore file (`lore_file`)."""

    kind: str
    label: str
    score: float
    where: str
    text: list[tuple[bool, str]]     # the snippet, (matched, text) parts
    scene: int | None = None
    memory: str = ""
    lore_file: str = ""


def marked(snippet: str) -> list[tuple[bool, str]]:
    """An FTS5 snippet (matches between [ and ]) as (matched, text) parts."""
    parts = re.split(r"\[([^\[\]]*)\]", snippet)
    return [(i % 2 == 1, part) for i, part in enumerate(parts) if part]


def lore_file(project: Project, key: str) -> str:
    """The lore file a lore entry's key (`lore:<file stem>` or `<stem>#2`) comes from."""
    stem = key.removeprefix("lore:").split("#")[0]
    found = [p.name for p in sorted(project.lore_dir.glob("*.y*ml")) if p.stem == stem]
    return found[0] if found else ""


def hit(project: Project, row: Row) -> Hit:
    label = row.title or (f"fact from scene {row.tick}" if row.kind == "fact" else row.key)
    text = marked(" ".join(row.snippet.split())) if row.snippet.strip() else \
        [(False, " ".join(row.body.split())[:200])]
    scene = row.meta.get("first") if row.kind == "summary" else row.tick
    return Hit(row.kind, label, row.score, points_to(row), text,
               scene=scene if isinstance(scene, int) and scene > 0 else None,
               memory=MEMORY_ANCHORS.get(row.kind, ""),
               lore_file=lore_file(project, row.key) if row.kind == "lore" else "")


def search_hits(project: Project, query: str, kind: str = "",
                limit: int = SEARCH_LIMIT) -> tuple[list[Hit], str]:
    """`novel search QUERY [--kind KIND]` as hits, and the index's note ("" if none)."""
    if kind and kind not in KINDS:
        raise ProjectError(f"no kind '{kind}': use one of {', '.join(KINDS)}")
    if not query.strip():
        return [], ""
    index, line = open_index(project)
    try:
        rows = search(index, query, kind or None, limit)
    finally:
        index.close()
    return [hit(project, r) for r in rows], line
