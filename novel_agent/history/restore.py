"""Moving the project's files to an entry of the history, all or nothing.

`move_to` writes what differs between the last entry and the target (files
written, files removed) and the history's refs in ONE journaled Transaction
(journal.Transaction): a kill before its journal leaves the project and its
history as they were; after it, the next command finishes the move. The caller
records pending hand edits first, so the files on disk are the last entry's and
nothing of them is lost.
"""

from __future__ import annotations

from pathlib import Path

from novel_agent.history.git import HistoryError
from novel_agent.history.store import History


def differences(history: History, a: str, b: str,
                paths: tuple[str, ...] = ()) -> list[tuple[str, str, str]]:
    """(status, path, new blob sha) for every file that differs from entry a to entry b
    (under `paths`, when given)."""
    out = history.git.run("diff-tree", "-r", "-z", "--no-renames", a, b, "--",
                          *paths).decode("utf-8")
    fields = out.split("\x00")
    found = []
    for meta, path in zip(fields[0::2], fields[1::2]):
        if not meta.startswith(":"):
            continue
        _, _, _, new_sha, status = meta[1:].split(" ")
        found.append((status, path, new_sha))
    return found


def move_to(history: History, target: str, refs: dict[str, str | None],
            files: dict[Path, str | None] | None = None,
            current: str = "HEAD", label: str = "") -> list[tuple[str, str]]:
    """Put the files of entry `target` in place of the last entry's, and set `refs`
    (paths under the git dir, e.g. refs/heads/main or HEAD, to their new text; None
    removes one, as the loose ref file it is when this process made it), in one
    transaction, with `files` (a path to its text, or None to remove it: files outside
    the history, such as redo's marker). `current`: the entry or tree the files on disk
    are (the last entry unless told). `label`: what the move is, for the note a kill's
    recovery gives ("the rewind to tick 4"). Returns (status, path) of each file changed."""
    git, project = history.git, history.project
    changes = differences(history, current, target)
    txn = project.transaction(label)
    written = [(path, sha) for status, path, sha in changes if status != "D"]
    for (path, _), data in zip(written, git.blobs([sha for _, sha in written])):
        try:
            txn.stage(project.root / path, data.decode("utf-8"))
        except UnicodeDecodeError:
            raise HistoryError(f"{path} is not UTF-8 text in the history: the project cannot be "
                               "moved to that entry; nothing was changed",
                               path=str(project.root / path)) from None
    for status, path, _ in changes:
        if status == "D":
            txn.remove(project.root / path)
    for ref, text in refs.items():
        if text is None:
            txn.remove(git.git_dir / ref)
        else:
            txn.stage(git.git_dir / ref, text.rstrip("\n") + "\n")
    for file, content in (files or {}).items():
        if content is None:
            txn.remove(file)
        else:
            txn.stage(file, content)
    txn.commit()
    return [(status, path) for status, path, _ in changes]
