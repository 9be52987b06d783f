"""The book's history: one git entry per landed tick, import piece, summary, revision,
change of the outline and hand edit, in `.novel/history.git` with the project folder as
work tree.

What an entry holds: every file of the project except what is not the story's
(`.novel/` holds only state.yaml and the prompt logs in it: the index, the lock,
the journal's staging, drafts, the usage ledger and the daemon's files, its log
in `.novel/log/` included, stay out; money spent stays spent; and `export/`, which
`novel export` makes again at will, stays out too). Each entry's message is a subject line and
trailers a program can read (`Novel-Kind`, `Novel-Tick`, `Novel-Words`), so
plain `git log` reads it too.

`History.record` makes an entry when the files differ from the last one (and
nothing otherwise); `record_pending` is called before every tick and by every
command that opens the project: what changed since the last entry is an edit
by hand ("edited by hand: scenes/scene_005.md"), or ticks whose entry a kill
prevented ("tick 7 (recorded late)").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from novel_agent.history.git import Git, HistoryError, git_date
from novel_agent.story.project.folder import Project

KEPT_IN_NOVEL = ("state.yaml", "log")     # what of .novel/ is the story's
NOT_STORY_FOLDERS = ("export",)           # what `novel export` makes: made again at will
# the daemon's, not the story's: its log (and rotations), and the output of a `novel run`
# that novel serve's Live page started
DAEMON_FILES = (".novel/log/daemon.log", ".novel/log/serve_run.out")
NOT_STORY_EXCLUDED = tuple(f":(exclude,glob){f}*" for f in DAEMON_FILES)
NOT_STORY_RECORDED = (*(f":(glob){f}*" for f in DAEMON_FILES),
                      *(f":(literal){f}" for f in NOT_STORY_FOLDERS))
GC_EVERY = 50      # ticks between `git gc --auto` (which packs once loose objects pile up)
KINDS = ("start", "tick", "import", "summary", "hand", "revise", "repair", "outline")
TRAILER_RE = re.compile(r"^Novel-(Kind|Tick|Words): (.*)$", re.M)
SCENE_FILE_RE = re.compile(r"^scenes/scene_(\d+)\.md$")
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"    # git's, for the first entry's diff


@dataclass
class Entry:
    """One entry of the history."""

    sha: str
    kind: str
    tick: int
    subject: str
    words: int | None = None
    changed: list[str] = field(default_factory=list)

    @property
    def short(self) -> str:
        return self.sha[:8]


def message(kind: str, tick: int, subject: str, words: int | None = None) -> str:
    """An entry's commit message: the subject, then the trailers."""
    lines = [f"Novel-Kind: {kind}", f"Novel-Tick: {tick}"]
    lines += [f"Novel-Words: {words}"] if words is not None else []
    return f"{subject}\n\n" + "\n".join(lines) + "\n"


def parse(sha: str, body: str, changed: list[str] | None = None) -> Entry:
    """An Entry from a commit's message."""
    found = dict(TRAILER_RE.findall(body))
    words = found.get("Words")
    return Entry(sha, found.get("Kind", "other"), int(found.get("Tick") or 0),
                 body.strip().splitlines()[0] if body.strip() else "",
                 int(words) if words and words.isdigit() else None, changed or [])


class History:
    """The history of one project (see the module docstring)."""

    def __init__(self, project: Project, *, git: Git | None = None,
                 now: Callable[[], datetime] | None = None):
        self.project = project
        self.git = git or Git(project.root)
        self.now = now

    @property
    def available(self) -> bool:
        return self.git.available

    def _dated(self) -> None:
        self.git.date = git_date(self.now()) if self.now else ""

    # -- writing -----------------------------------------------------------------
    def ensure(self) -> Entry | None:
        """Create the repository when missing, and its first entry ("history begins at
        tick N") when it has none; the entry made, if any."""
        if not self.git.exists():
            self.git.init()
        else:
            self.git.split_index()
        self.git.clear_stale_locks()
        if self._head()[0] is None:
            tick = self.project.tick()
            return self._commit("start", tick, f"history begins at tick {tick}")
        return None

    def _head(self) -> tuple[str | None, str | None]:
        """(the last entry, its tree), or (None, None) before the first."""
        out = self.git.run("rev-parse", "HEAD", "HEAD^{tree}", check=False)
        found = out.decode().split()
        if len(found) == 2 and all(re.fullmatch(r"[0-9a-f]{40}", f) for f in found):
            return found[0], found[1]
        return None, None

    def stage(self, paths: Sequence[str] | None = None) -> str:
        """Put the project's files into the history's index (only `paths`, relative to the
        project, when given: the files known to have changed); the tree they make."""
        if paths is not None:
            story = [p for p in paths if is_story(p)]
            if story:       # by name: git's ignore rules do not apply, a gone one leaves
                self.git.run("update-index", "--add", "--remove", "--replace", "-z",
                             "--stdin", input="\0".join(story).encode("utf-8"))
            return self.write_tree()
        # .novel/ is left out whole, so git never walks into history.git (its loose objects
        # grow with the book: at tick 300 the walk took 0.7 s), then what of it is the
        # story is added by name (a name git cannot match fails `add`, so one gone from
        # the disk is taken out of the index instead).
        self.git.run("add", "-A", "-f", "--", ".", ":(exclude,literal).novel",
                     *(f":(exclude,literal){folder}" for folder in NOT_STORY_FOLDERS))
        novel = self.project.novel_dir
        kept = [f".novel/{n}" for n in KEPT_IN_NOVEL if (novel / n).exists()]
        gone = [f".novel/{n}" for n in KEPT_IN_NOVEL if not (novel / n).exists()]
        if kept:
            self.git.run("add", "-A", "-f", "--", *kept, *NOT_STORY_EXCLUDED)
        # what is not the story's and an older version recorded (the daemon's log, exports)
        self.git.run("rm", "-r", "-q", "--cached", "--ignore-unmatch", "--", *gone,
                     *NOT_STORY_RECORDED)
        return self.write_tree()

    def write_tree(self) -> str:
        """The tree the index makes. `--missing-ok`: git does not look up every entry of
        each folder it rewrites (a character's change made it look up all 743 objects of
        memory/characters at tick 300: 14.5 ms, 10.4 without), and every entry's object
        is there: update-index and add wrote the new ones, the index keeps the rest from
        being pruned."""
        return self.git.text("write-tree", "--missing-ok")

    def record(self, kind: str, tick: int, subject: str, words: int | None = None, *,
               paths: Sequence[str] | None = None) -> Entry | None:
        """Make an entry of what the files hold now (of `paths` only, when given: every
        other file as the last entry has it); None when nothing changed since the last
        one."""
        if not self.git.exists():
            self.ensure()
        return self._commit(kind, tick, subject, words, paths)

    def _commit(self, kind: str, tick: int, subject: str, words: int | None = None,
                paths: Sequence[str] | None = None, tree: str | None = None) -> Entry | None:
        """`tree`: what the files make, when the caller has just staged them."""
        tree, (head, head_tree) = tree or self.stage(paths), self._head()
        if tree == head_tree:
            return None
        self._dated()
        text = message(kind, tick, subject, words)
        sha = self.git.text("commit-tree", tree, *(["-p", head] if head else []), "-F", "-",
                            input=text.encode("utf-8"))
        self.git.run("update-ref", "HEAD", sha, *([head] if head else []))
        if kind == "tick" and tick % GC_EVERY == 0:
            self.git.run("gc", "--auto", "--quiet")     # plumbing never packs by itself
        return parse(sha, text)

    def record_pending(self, paths: Sequence[str] | None = None) -> Entry | None:
        """Give what changed since the last entry an entry of its own: ticks that landed
        without one, else edits by hand (naming the files). None when nothing did.
        `paths`: the only files that may have changed (history/seen.py), when known."""
        if paths is not None and not paths and self.git.exists():
            return None
        made = self.ensure()
        if made is not None:
            return made
        tree, (_, head_tree) = self.stage(paths), self._head()
        if tree == head_tree:
            return None
        head = self.head()
        changed = self.git.text("diff-tree", "-r", "--name-only", "--no-renames", "HEAD",
                                tree).splitlines()
        tick = self.project.tick()
        if tick > head.tick and any(SCENE_FILE_RE.match(p) for p in changed):
            what = f"tick {tick}" if tick == head.tick + 1 else f"ticks {head.tick + 1}–{tick}"
            return self._commit("tick", tick, f"{what} (recorded late)", tree=tree)
        shown = [p for p in changed if not p.startswith(".novel/")] or changed
        more = f" and {len(shown) - 6} more" if len(shown) > 6 else ""
        return self._commit("hand", tick, "edited by hand: " + ", ".join(shown[:6]) + more,
                            tree=tree)

    # -- reading -----------------------------------------------------------------
    def head(self, rev: str = "HEAD") -> Entry:
        """The entry `rev` names."""
        sha = self.git.resolve(rev)
        if sha is None:
            raise HistoryError(f"no history entry '{rev}'", path=str(self.git.git_dir))
        return parse(sha, self.git.run("log", "-1", "--format=%B", sha).decode("utf-8", "replace"))

    def entries(self, limit: int | None = None, rev: str = "HEAD", *, skip: int = 0,
                names: bool = True) -> list[Entry]:
        """The entries of `rev`'s line (first parents), newest first (the `skip` newest
        left out), with the files each changed unless `names` is off: git works out what
        each entry changed for them (the whole line at tick 1,000: 1.7 s, and 18 ms
        without)."""
        if not self.git.exists() or self.git.resolve(rev) is None:
            return []
        out = self.git.run("log", "--first-parent", "--format=%x1e%H%x00%B%x00",
                           *(["--name-only"] if names else []),
                           *([f"-n{limit}"] if limit else []),
                           *([f"--skip={skip}"] if skip else []), rev).decode("utf-8", "replace")
        found = []
        for chunk in out.split("\x1e")[1:]:
            sha, body, changed = (chunk.split("\x00") + ["", ""])[:3]
            found.append(parse(sha, body, [n for n in changed.splitlines() if n.strip()]))
        return found

    def entry_at(self, tick: int, rev: str = "HEAD") -> Entry:
        """The last entry of `rev`'s line made at tick `tick` (its summaries and hand
        edits included): the project as it was after tick `tick`."""
        line = self.entries(rev=rev, names=False)
        for entry in line:
            if entry.tick == tick:
                return entry
        first = line[-1].tick if line else self.project.tick()
        if tick < first:
            raise HistoryError(f"the history begins at tick {first}: there is no entry for "
                               f"tick {tick}", path=str(self.git.git_dir))
        raise HistoryError(f"no history entry for tick {tick} on branch "
                           f"'{self.git.branch()}' (its last tick is "
                           f"{line[0].tick if line else 0})", path=str(self.git.git_dir))

    def diff(self, a: str, b: str, paths: tuple[str, ...] = (), stat: bool = False,
             words: bool = False) -> str:
        """git's diff between two entries, limited to `paths`; `words`: word by word, as
        git's `--word-diff=porcelain` (prose changes a word or two in a paragraph)."""
        return self.git.run("diff", "--no-color", *(["--stat"] if stat else []),
                            *(["--word-diff=porcelain"] if words else []), a, b, "--",
                            *paths).decode("utf-8", "replace")

    def before(self, sha: str) -> str:
        """What entry `sha` is diffed against: the entry before it on its line, or the
        empty tree for the first one."""
        return self.git.resolve(f"{sha}^") or EMPTY_TREE


def is_story(path: str) -> bool:
    """Whether a file (relative to the project) is one the history keeps."""
    if path.startswith(DAEMON_FILES) or path.split("/")[0] in NOT_STORY_FOLDERS:
        return False
    if not path.startswith(".novel/"):
        return True
    return path.split("/")[1] in KEPT_IN_NOVEL


def describe(paths: list[str]) -> str:
    """What an entry changed, in a few words: "scene 7, plan 7, memory ×3, checkpoint_010"."""
    parts: list[str] = []
    memory = 0
    for path in paths:
        folder, _, name = path.partition("/")
        stem = name.rsplit(".", 1)[0]
        if folder == "scenes" and (m := SCENE_FILE_RE.match(path)):
            parts.append(f"scene {int(m.group(1))}")
        elif folder == "plans" and stem.startswith("plan_") and stem[5:].isdigit():
            parts.append(f"plan {int(stem[5:])}")
        elif folder == "memory":
            memory += 1
        elif folder == "summaries":
            parts.append(stem)
        elif folder != ".novel":
            parts.append(path)
    parts += [f"memory ×{memory}"] if memory else []
    return ", ".join(parts) or "state"


def status_line(project: Project) -> str:
    """For `novel status`: the branch and the history's size, or why there is none."""
    history = History(project)
    if not history.available:
        return "off (git is not on PATH)"
    if not history.git.exists() or history.git.resolve("HEAD") is None:
        return "none yet (made at the next tick)"
    count = history.git.text("rev-list", "--count", "--first-parent", "HEAD")
    return f"{history.git.branch()}  ({count} entries in .novel/history.git)"
