"""The exception tree of novel_agent.

    NovelError                      root: every error the CLI turns into one line
    ├── ConfigError                 a bad configuration value (file, key, line)
    ├── ProjectError                a missing, broken or locked project (path)
    │   ├── LockError               another process is ticking this project (pid, since)
    │   ├── OverwriteError          a commit would replace a file it did not write (path)
    │   └── DamagedBookError        the next tick cannot start: a scene missing mid-book or
    │                               damaged, a plan past the last scene (path)
    ├── FileFormatError             a project file that cannot be read (file, line)
    │   ├── OutlineError            outline/outline.yaml cannot be used (file, line, key)
    │   └── OutsideLinkError        a file of the project is a link out of it: not read (file)
    ├── ModelError                  an LLM call failed (after retries)
    │   └── ModelResponseError      the answer could not be parsed or validated
    ├── ContextOverflowError        the pinned sections alone exceed the budget
    ├── VocabularyError             a tokenizer vocabulary is missing or corrupt (path)
    ├── ExportError                 the book cannot be exported (range, format, no scenes)
    ├── ManuscriptError             a manuscript to import cannot be read or split
    ├── StorageError                the disk refused a write: full, read-only, name too long
    ├── ImportStoppedError          an import stopped (a model failure); what landed stays
    ├── TickError                   a stage failed; the project is unchanged (cause chained)
    ├── CommittedError              the tick landed, something after its commit failed
    ├── SummarizeError              the summarizer failed; checkpoints stay pending
    ├── CostCeilingError            the next tick would pass the cost ceiling (exit code 4)
    ├── AuditHoldError              audit.mode hold: findings stopped a tick (exit code 5)
    ├── BookFinishedError           the outline's last beat has landed: no tick (exit code 6)
    └── MissingExtraError           an optional extra is not installed (`pip install ...`)

Failure data lives on attributes, so callers can test and render them. An
error whose `exit_code` is not 1 asks the CLI to exit with it.
"""

from __future__ import annotations


class NovelError(Exception):
    """Root of every error novel_agent raises on purpose."""

    exit_code = 1


class ConfigError(NovelError):
    """A configuration value is missing, unknown or of the wrong type."""

    def __init__(self, message: str, *, file: str | None = None, key: str | None = None,
                 line: int | None = None):
        self.file, self.key, self.line = file, key, line
        where = ""
        if file:
            where = f"{file}:{line}: " if line else f"{file}: "
        super().__init__(f"{where}{message}")


class ProjectError(NovelError):
    """A project cannot be found, created or opened; `path` is the folder or file at issue."""

    def __init__(self, message: str, *, path: str | None = None):
        self.path = path
        super().__init__(message)


class LockError(ProjectError):
    """Another process holds the project's lock; `pid` and `since` say which, from when."""

    def __init__(self, message: str, *, path: str | None = None, pid: int | None = None,
                 since: str = ""):
        self.pid, self.since = pid, since
        super().__init__(message, path=path)


class OverwriteError(ProjectError):
    """A commit found a scene, plan or summary it did not write where it meant to write one."""


class DamagedBookError(ProjectError):
    """The book's files are not whole (a scene missing in the middle of the book or that cannot
    be read, a plan or summary past the last scene): the next tick stops before it costs
    anything, naming the file and `novel doctor --fix`."""


class FileFormatError(NovelError):
    """A project file exists but cannot be parsed."""

    def __init__(self, message: str, *, file: str | None = None, line: int | None = None):
        self.file, self.line = file, line
        where = f"{file}:{line}: " if file and line else (f"{file}: " if file else "")
        super().__init__(f"{where}{message}")


class OutlineError(FileFormatError):
    """The outline (`outline/outline.yaml`, or an edit of it) cannot be used: `key` names the
    field at issue, `file` and `line` where it stands."""

    def __init__(self, message: str, *, file: str | None = None, line: int | None = None,
                 key: str | None = None):
        self.key = key
        super().__init__(message, file=file, line=line)


class OutsideLinkError(FileFormatError):
    """A file of a project is (or lies under) a link to outside the project: the program
    reads nothing through it (files.read_bytes refuses it before opening the target)."""


class ModelError(NovelError):
    """An LLM call failed: network, HTTP status, timeout, or a server refusal.

    `attempts` is how many requests the client made; `usage` what the server
    reported for the failed call (a models.base.Usage), None if it said nothing.
    """

    def __init__(self, message: str, *, stage: str | None = None, status: int | None = None,
                 attempts: int = 1, usage: object = None):
        self.stage, self.status = stage, status
        self.attempts, self.usage = attempts, usage
        super().__init__(message)


class ModelResponseError(ModelError):
    """The model answered, but the answer is unusable (not JSON, wrong shape)."""

    def __init__(self, message: str, *, stage: str | None = None, raw: str = "",
                 usage: object = None, call: object = None):
        self.raw, self.call = raw, call    # call: the StageCall of every attempt, if known
        super().__init__(message, stage=stage, usage=usage)


class ContextOverflowError(NovelError):
    """The pinned parts of a prompt alone do not fit the stage's budget (`tokens`: the
    largest section's; `need`: the whole prompt's, when known, else 0)."""

    def __init__(self, message: str, *, section: str, tokens: int, budget: int,
                 need: int = 0):
        self.section, self.tokens, self.budget, self.need = section, tokens, budget, need
        super().__init__(message)


class VocabularyError(NovelError):
    """A token vocabulary cannot be read or fails its hash check."""

    def __init__(self, message: str, *, path: str | None):
        self.path = path
        super().__init__(message)


class TickError(NovelError):
    """A tick failed in one of its stages; nothing was committed."""

    def __init__(self, message: str, *, stage: str, draft_path: str | None = None):
        self.stage, self.draft_path = stage, draft_path
        super().__init__(message)

    @property
    def status(self) -> int | None:
        """The HTTP status of the model error behind it, if there was one."""
        return getattr(self.__cause__, "status", None)


class SummarizeError(NovelError):
    """The summarizer failed (its model error is the cause); what it owes stays pending."""

    def __init__(self, message: str, *, checkpoint: int | None = None,
                 pending: list[int] | None = None):
        self.checkpoint, self.pending = checkpoint, list(pending or [])
        super().__init__(message)


class ExportError(NovelError):
    """The book cannot be made: no scenes, a bad range, format or chapter spec."""


class ManuscriptError(NovelError):
    """A manuscript cannot be read or split (a missing or non-UTF-8 file, a bad mode)."""


class ImportStoppedError(NovelError):
    """An import stopped part way (its model error chained): `done` of `total` pieces are
    imported, each committed whole; the same import run again resumes after them."""

    def __init__(self, message: str, *, done: int, total: int):
        self.done, self.total = done, total
        super().__init__(message)


class CostCeilingError(NovelError):
    """The next tick's estimated cost would take the spending past a ceiling (dollars)."""

    exit_code = 4

    def __init__(self, message: str, *, spent: float, estimate: float, ceiling: float,
                 tick: int | None = None):
        self.spent, self.estimate, self.ceiling, self.tick = spent, estimate, ceiling, tick
        super().__init__(message)


class AuditHoldError(NovelError):
    """`audit.mode: hold` stopped a tick before its commit: nothing landed; the draft and
    the findings (`findings`, one line each) wait in `.novel/held.yaml` for the author."""

    exit_code = 5

    def __init__(self, message: str, *, tick: int, findings: list[str], draft_path: str = ""):
        self.tick, self.findings, self.draft_path = tick, findings, draft_path
        super().__init__(message)


class BookFinishedError(NovelError):
    """The book is finished: its outline's last beat has landed, and no tick goes on until
    the outline is extended. `chapters`, `scenes` and `words` are the book's counts."""

    exit_code = 6

    def __init__(self, message: str, *, chapters: int, scenes: int, words: int,
                 line: str = ""):
        self.chapters, self.scenes, self.words = chapters, scenes, words
        self.line = line or message      # "the book is finished: …", without what to do
        super().__init__(message)


class MissingExtraError(NovelError):
    """A feature needs an optional extra that is not installed (`extra`, `package`)."""

    def __init__(self, message: str, *, extra: str, package: str):
        self.extra, self.package = extra, package
        super().__init__(message)


class StorageError(NovelError):
    """The disk refused a read or write (ENOSPC, EACCES, EROFS, ENAMETOOLONG...);
    `path` is the file and `errno` the reason."""

    def __init__(self, message: str, *, path: str | None = None, errno: int | None = None):
        self.path, self.errno = path, errno
        super().__init__(message)


class CommittedError(NovelError):
    """Tick `tick` is committed (its scene is on disk); what ran after the commit failed."""

    def __init__(self, message: str, *, tick: int):
        self.tick = tick
        super().__init__(message)
