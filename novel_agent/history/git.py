"""The `git` executable, run against the project's own history repository only.

The history lives in `.novel/history.git` with the project folder as its work
tree, so a project inside the user's own repository keeps working and plain git
reads it (`git --git-dir=.novel/history.git log`). Every call gets an environment
of its own: the user's GIT_* variables, global and system configuration never
reach it, and dates come from the caller's clock.

Why the executable and not dulwich (measured, see bench/history_cost.py): an
entry costs ~13 ms at tick 10 and ~27 ms at tick 1,000 with git 2.39, against
~22 ms and ~118 ms with dulwich 1.2 (which walks the tree in Python); and git
adds no dependency. Without git on PATH the history is off and says so.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from novel_agent.errors import ProjectError

GIT_DIR = "history.git"
IDENTITY = ("novel_agent", "novel_agent@localhost")
# The index split: an entry rewrites a small file of what changed, not the index of every
# file of the book (at tick 1,000 update-index and write-tree took 28.7 ms an entry, 24.7
# split); a shared index no longer used is removed when the next is made.
SPLIT_INDEX = (("core.splitIndex", "true"), ("splitIndex.sharedIndexExpire", "now"))


class HistoryError(ProjectError):
    """The history cannot be read or written (git missing, failed, or no such entry)."""


def git_executable() -> str | None:
    """The git on PATH, or None."""
    return shutil.which("git")


class Git:
    """Runs git on one project's history repository."""

    def __init__(self, root: Path, executable: str | None = None):
        self.root = Path(root)
        self.git_dir = self.root / ".novel" / GIT_DIR
        self.executable = executable or git_executable()
        self.date = ""      # the date given to entries ("@<unix> +0000"); set by the caller

    @property
    def available(self) -> bool:
        return self.executable is not None

    def exists(self) -> bool:
        return (self.git_dir / "HEAD").is_file()

    def env(self) -> dict[str, str]:
        env = {"GIT_DIR": str(self.git_dir), "GIT_WORK_TREE": str(self.root),
               "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null",
               "HOME": str(self.git_dir), "LC_ALL": "C", "GIT_TERMINAL_PROMPT": "0",
               "GIT_AUTHOR_NAME": IDENTITY[0], "GIT_AUTHOR_EMAIL": IDENTITY[1],
               "GIT_COMMITTER_NAME": IDENTITY[0], "GIT_COMMITTER_EMAIL": IDENTITY[1]}
        if self.date:
            env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = self.date
        return env

    def run(self, *args: str, input: bytes | None = None, check: bool = True) -> bytes:
        """Run `git ARGS` in the project folder; its stdout. A failure is a HistoryError
        quoting git's first line of complaint."""
        if self.executable is None:
            raise HistoryError("the history needs the `git` executable, which is not on PATH: "
                               "install git", path=str(self.git_dir))
        done = subprocess.run([self.executable, *args], cwd=self.root, env=self.env(),
                              input=input, capture_output=True)
        if check and done.returncode != 0:
            said = done.stderr.decode("utf-8", "replace").strip().splitlines()
            raise HistoryError(f"git {args[0]} failed in {self.git_dir}: "
                               f"{said[0] if said else f'exit {done.returncode}'}",
                               path=str(self.git_dir))
        return done.stdout

    def text(self, *args: str, input: bytes | None = None) -> str:
        return self.run(*args, input=input).decode("utf-8", "replace").strip()

    def init(self) -> None:
        """Create the repository (a branch `main`), configured to need nothing outside it."""
        self.run("init", "-q", "--initial-branch=main")
        for key, value in (("core.worktree", "../.."), ("core.quotepath", "off"),
                           ("core.autocrlf", "false"), ("gc.autoDetach", "false"),
                           ("user.name", IDENTITY[0]), ("user.email", IDENTITY[1]),
                           *SPLIT_INDEX):
            self.run("config", key, value)
        exclude = self.git_dir / "info" / "exclude"    # plain `git status` shows the story only
        exclude.parent.mkdir(parents=True, exist_ok=True)
        exclude.write_text("/.novel/*\n!/.novel/state.yaml\n!/.novel/log/\n"
                           "/.novel/log/daemon.log*\n/.novel/log/serve_run.out\n/export/\n",
                           encoding="utf-8")

    def split_index(self) -> None:
        """Split the index of a repository made before it was (SPLIT_INDEX): its config
        file read, git run only when it says nothing of it."""
        try:
            text = (self.git_dir / "config").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return
        if "splitindex" not in text.lower():
            for key, value in SPLIT_INDEX:
                self.run("config", key, value)

    def resolve(self, rev: str) -> str | None:
        """The commit `rev` names, or None."""
        out = self.run("rev-parse", "-q", "--verify", f"{rev}^{{commit}}", check=False)
        return out.decode().strip() or None

    def branch(self) -> str:
        """The branch HEAD is on."""
        head = (self.git_dir / "HEAD").read_text(encoding="utf-8").strip()
        return head.removeprefix("ref: refs/heads/")

    def blobs(self, shas: Sequence[str]) -> list[bytes]:
        """The contents of blobs, in order (one `cat-file --batch`)."""
        if not shas:
            return []
        out = self.run("cat-file", "--batch", input="".join(f"{s}\n" for s in shas).encode())
        blobs, at = [], 0
        for _ in shas:
            header_end = out.index(b"\n", at)
            size = int(out[at:header_end].split()[2])
            blobs.append(out[header_end + 1:header_end + 1 + size])
            at = header_end + 1 + size + 1
        return blobs

    def contents(self, revs: Sequence[str]) -> list[bytes | None]:
        """What each of `revs` ("<commit>:<path>") holds, in order; None for one that names
        nothing (the file was not in that entry). One `cat-file --batch`."""
        if not revs:
            return []
        out = self.run("cat-file", "--batch", input="".join(f"{r}\n" for r in revs).encode())
        found: list[bytes | None] = []
        at = 0
        for _ in revs:
            header_end = out.index(b"\n", at)
            line = out[at:header_end]
            header = line.split()
            if line.endswith((b" missing", b" ambiguous")):     # no content follows
                found.append(None)
                at = header_end + 1
                continue
            size = int(header[2])
            found.append(out[header_end + 1:header_end + 1 + size] if header[1] == b"blob"
                         else None)
            at = header_end + 1 + size + 1
        return found

    def is_link(self, commit: str, path: str) -> bool:
        """Whether `path` is a symbolic link in `commit`'s tree (git keeps a link as its
        target's name, not the file it names)."""
        out = self.run("ls-tree", "-z", commit, "--", path, check=False)
        return out.startswith(b"120000 ")

    def clear_stale_locks(self) -> list[Path]:
        """Remove the *.lock files a killed git left (the caller holds the project's
        lock, so no git of ours is running)."""
        found = [p for p in (self.git_dir / "index.lock", self.git_dir / "HEAD.lock")
                 if p.exists()]
        refs = self.git_dir / "refs"
        found += list(refs.rglob("*.lock")) if refs.is_dir() else []
        for path in found:
            path.unlink(missing_ok=True)
        return found


def git_date(when: datetime) -> str:
    """A datetime as git's raw date."""
    return f"@{int(when.timestamp())} +0000"
