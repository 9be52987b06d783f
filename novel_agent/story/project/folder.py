"""A story project on disk: its paths, creation, discovery and lock.

`Project(root)` knows where every file lives (the README's "The project folder"
draws the tree); it does not interpret them. `find_project` turns what the user typed
after `-p` (a path, a name, or nothing) into a Project.
"""

from __future__ import annotations

import difflib
import fcntl
import os
import re
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

from novel_agent.clock import utc_now
from novel_agent.config.layers import Layer, config_layers, load_yaml_layer, merge_layers, user_presets_dir
from novel_agent.config.settings import Config
from novel_agent.errors import ConfigError, FileFormatError, LockError, ProjectError
from novel_agent.files import atomic_write, compose_yaml, dump_yaml, read_bytes, read_yaml, yaml_line
from novel_agent.story.project.journal import Transaction, journal_targets, recover
from novel_agent.story.project.state import check_state
from novel_agent.story.scenes import SCENE_RE, last_tick

STORY_KEYS = ("name", "title", "author", "premise", "genre", "tone", "setting", "protagonist",
              "style_guide", "preset")
PROJECT_FILE = "project.yaml"
# How long each story key may be, in characters. The story bible goes whole into every
# stage's prompt (pinned: it is never cut), so it must leave a model's window room: at
# these limits it is ~3,300 tokens. A 10 MB premise was read for 15 s, then refused by
# the planner's template as too long to render.
STORY_LIMITS = {"name": 100, "title": 200, "author": 200, "premise": 4_000, "genre": 200,
                "tone": 500, "setting": 2_000, "protagonist": 2_000, "style_guide": 4_000,
                "preset": 64}
PROJECT_FILE_LIMIT = 256 * 1024     # bytes: every story key at its limit, and the settings,
                                    # many times over; a longer file is not parsed at all


def too_long(values: Mapping[str, Any]) -> tuple[str, str] | None:
    """The first story key of `values` longer than its STORY_LIMITS, and what it is told
    ("premise: 10,000,000 characters, more than its limit of 4,000 ..."); None if none is."""
    for key, limit in STORY_LIMITS.items():
        value = values.get(key)
        if value is not None and len(text := str(value)) > limit:
            return key, (f"{key}: {len(text):,} characters, more than its limit of {limit:,} "
                         "(the story bible goes whole into every prompt: say the rest in lore/)")
    return None


def check_story_lengths(values: Mapping[str, Any], source: str,
                        line: Callable[[str], int | None] = lambda key: None) -> None:
    """ConfigError naming `source`, the key and its line when a story key of `values` is
    longer than its limit (STORY_LIMITS)."""
    if (found := too_long(values)) is not None:
        key, told = found
        raise ConfigError(told, file=source, key=key, line=line(key))


def _oversized(path: Path) -> None:
    """Refuse a project.yaml over PROJECT_FILE_LIMIT before it is parsed (a 10 MB premise
    took 12 s to parse): its story key over its limit named, with its line (found by
    composing the file with the C loader, which expands nothing), else the file's size."""
    try:
        size = path.stat().st_size
    except OSError:
        return
    if size <= PROJECT_FILE_LIMIT:
        return
    try:
        node = compose_yaml(read_bytes(path).decode("utf-8", errors="replace"))
    except yaml.YAMLError:
        node = None
    if isinstance(node, yaml.MappingNode):
        pairs = [(k, v) for k, v in node.value if isinstance(v, yaml.ScalarNode)]
        values = {str(k.value): v.value for k, v in pairs}
        lines = {str(k.value): k.start_mark.line + 1 for k, _ in pairs}
        check_story_lengths(values, str(path), lines.get)
    raise ConfigError(f"{size:,} bytes, more than a project file may hold "
                      f"({PROJECT_FILE_LIMIT:,})", file=str(path))



@dataclass(frozen=True)
class Story:
    """The story bible: what project.yaml says the book is."""

    name: str
    title: str = ""
    author: str = ""
    premise: str = ""
    genre: str = ""
    tone: str = ""
    setting: str = ""
    protagonist: str = ""
    style_guide: str = ""
    preset: str = "balanced"

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], name: str) -> Story:
        known = {f.name for f in fields(cls)}
        values = {k: str(v).strip() for k, v in data.items() if k in known and v is not None}
        values.setdefault("name", name)
        return cls(**values)


@dataclass
class Project:
    """Paths of one project folder."""

    root: Path
    _lock_handle: Any = field(default=None, repr=False, compare=False)
    chosen: str = field(default="", repr=False, compare=False)   # why, when chosen without -p

    def __post_init__(self) -> None:
        self.root = Path(self.root).resolve()

    # -- paths -------------------------------------------------------------
    @property
    def name(self) -> str:
        return self.root.name

    @property
    def project_file(self) -> Path:
        return self.root / PROJECT_FILE

    @property
    def steer_file(self) -> Path:
        return self.root / "steer.md"

    @property
    def scenes_dir(self) -> Path:
        return self.root / "scenes"

    @property
    def plans_dir(self) -> Path:
        return self.root / "plans"

    @property
    def memory_dir(self) -> Path:
        return self.root / "memory"

    @property
    def lore_dir(self) -> Path:
        return self.root / "lore"

    @property
    def summaries_dir(self) -> Path:
        return self.root / "summaries"

    @property
    def outline_file(self) -> Path:
        """`outline/outline.yaml`: the book's outline, when one is made (story/outline/file.py)."""
        return self.root / "outline" / "outline.yaml"

    @property
    def templates_dir(self) -> Path:
        return self.root / "templates"

    @property
    def novel_dir(self) -> Path:
        return self.root / ".novel"

    @property
    def log_dir(self) -> Path:
        return self.novel_dir / "log"

    @property
    def drafts_dir(self) -> Path:
        return self.novel_dir / "drafts"

    @property
    def state_file(self) -> Path:
        return self.novel_dir / "state.yaml"

    @property
    def index_db(self) -> Path:
        return self.novel_dir / "index.db"

    def scene_path(self, tick: int) -> Path:
        return self.scenes_dir / f"scene_{tick:03d}.md"

    def plan_path(self, tick: int) -> Path:
        return self.plans_dir / f"plan_{tick:03d}.yaml"

    def transaction(self, label: str = "") -> Transaction:
        """A Transaction rooted at this project (see journal.Transaction); `label` says what
        it is in the note a kill's recovery gives ("the rewind to tick 4")."""
        return Transaction(self.root, self.novel_dir / "txn", label)

    # -- reading -----------------------------------------------------------
    def exists(self) -> bool:
        return self.project_file.is_file()

    def story_data(self) -> dict[str, Any]:
        """project.yaml's values; a story key longer than its limit (STORY_LIMITS) is a
        ConfigError naming it and its line, a file over PROJECT_FILE_LIMIT one before it is
        parsed."""
        _oversized(self.project_file)
        data = read_yaml(self.project_file, {})
        if not isinstance(data, dict):
            raise ProjectError(f"{self.project_file}: expected a mapping at the top level",
                               path=str(self.project_file))
        check_story_lengths(data, str(self.project_file),
                            lambda key: yaml_line(self.project_file, key))
        return data

    def story(self) -> Story:
        """The story bible from project.yaml; a story key that is not text names its line."""
        data = self.story_data()
        for key in STORY_KEYS:
            value = data.get(key)
            if isinstance(value, (list, dict, bool)):
                raise ConfigError(f"'{key}' must be text, not {value!r} (quote it, or join the "
                                  "items into one line)", file=str(self.project_file), key=key,
                                  line=yaml_line(self.project_file, key))
        return Story.from_mapping(data, self.name)

    def config_layer(self) -> Layer:
        """project.yaml as a configuration layer (story keys are not settings)."""
        _oversized(self.project_file)
        return load_yaml_layer(self.project_file, extra_keys=STORY_KEYS)

    def config(self, env: Mapping[str, str] | None = None,
               flags: Mapping[str, Any] | None = None, preset: str | None = None) -> Config:
        """The merged configuration: defaults < preset < project.yaml < env < flags."""
        name, layers = self.config_layers(env, flags, preset)
        return merge_layers(layers, preset=name)

    def config_layers(self, env: Mapping[str, str] | None = None,
                      flags: Mapping[str, Any] | None = None,
                      preset: str | None = None) -> tuple[str, list[Layer]]:
        """The preset's name and the layers the configuration is merged from."""
        layer = self.config_layer()
        name = preset or str(self.story_data().get("preset") or "balanced")
        try:
            return config_layers(layer, preset=name, env=env, flags=flags,
                                 user_presets=self.presets_dir(env or {}))
        except ConfigError as exc:
            if exc.key != "preset" or exc.file or preset:
                raise
            raise ConfigError(str(exc), file=str(self.project_file), key="preset",
                              line=yaml_line(self.project_file, "preset")) from None

    def presets_dir(self, env: Mapping[str, str]) -> Path:
        """The user's presets folder for this project (see config.user_presets_dir)."""
        return user_presets_dir(env, self.root.parent)

    def tick(self) -> int:
        """The number of the last committed tick (0 for a new project): the highest scene
        on disk, or in a commit journal not yet finished. state.yaml's counter is only a
        cache of it (recovery.reconcile keeps it in step)."""
        return max(last_tick(self.scenes_dir), journal_tick(self.novel_dir) or 0)

    def state(self) -> dict[str, Any]:
        """`.novel/state.yaml`: the tick counter, the writer's tier bounds, checkpoints owed
        (checked: a wrong type is a FileFormatError naming the line)."""
        return check_state(self.state_file, read_yaml(self.state_file, {}))

    def stage_state(self, txn: Transaction, state: Mapping[str, Any]) -> None:
        """Put `state` into a transaction: the one way state.yaml is written."""
        txn.stage(self.state_file, dump_yaml(dict(state)))

    def update_state(self, **changes: Any) -> dict[str, Any]:
        """Change keys of state.yaml in a transaction of its own (None removes a key)."""
        state = self.state()
        for key, value in changes.items():
            if value is None:
                state.pop(key, None)
            else:
                state[key] = value
        txn = self.transaction()
        self.stage_state(txn, state)
        txn.commit()
        return state

    def recover(self) -> bool:
        """Finish or drop a commit that a crash interrupted."""
        return recover(self.root, self.novel_dir / "txn")

    # -- lock --------------------------------------------------------------
    @property
    def lock_file(self) -> Path:
        return self.novel_dir / "lock"

    def acquire_lock(self, wait: float = 0.0, *, clock: Callable[[], float] = time.monotonic,
                     sleep: Callable[[float], None] = time.sleep,
                     now: Callable[[], datetime] = utc_now) -> None:
        """Take the project's lock (an fcntl lock: it dies with its process), waiting up
        to `wait` seconds; else raise LockError naming the holder's pid and since when."""
        try:
            self.novel_dir.mkdir(parents=True, exist_ok=True)
            handle = open(self.lock_file, "a+")
        except PermissionError:
            raise ProjectError(f"cannot write to {self.novel_dir}: permission denied (a "
                               "read-only project?); make the folder writable and run again",
                               path=str(self.novel_dir)) from None
        deadline = clock() + wait
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if clock() >= deadline:
                    handle.close()
                    raise self._busy(wait) from None
                sleep(min(0.1, max(0.0, deadline - clock())))
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()} {now().isoformat(timespec='seconds')}\n")
        handle.flush()
        self._lock_handle = handle

    def lock_holder(self) -> tuple[int | None, str]:
        """(pid, since) as the lock's holder wrote them into the lock file."""
        try:
            pid, _, since = read_bytes(self.lock_file).decode("utf-8").strip().partition(" ")
            return int(pid), since
        except (OSError, ValueError, FileFormatError):
            return None, ""

    def _busy(self, wait: float) -> LockError:
        pid, since = self.lock_holder()
        who = f"process {pid}" if pid else "another novel process"
        waited = f" (waited {wait:g}s)" if wait else ""
        return LockError(f"project '{self.name}' is busy: {who} has been ticking it"
                         f"{' since ' + since if since else ''}{waited}; stop it with "
                         f"`novel stop -p {self.name}` or try again with --wait",
                         path=str(self.lock_file), pid=pid, since=since)

    def release_lock(self) -> None:
        if self._lock_handle is not None:
            self._lock_handle.truncate(0)   # a pid left in the file means a killed process
            fcntl.flock(self._lock_handle, fcntl.LOCK_UN)
            self._lock_handle.close()
            self._lock_handle = None

    @contextmanager
    def locked(self, wait: float = 0.0) -> Iterator[Project]:
        """Hold the lock (waiting up to `wait` s) with an interrupted commit recovered."""
        self.acquire_lock(wait)
        try:
            self.recover()
            yield self
        finally:
            self.release_lock()



def journal_tick(novel_dir: Path) -> int | None:
    """The tick whose scene an unfinished commit journal under `novel_dir` lands, if any."""
    ticks = [int(m.group(1)) for target in journal_targets(novel_dir / "txn")
             if (m := SCENE_RE.match(Path(target).name))]
    return max(ticks) if ticks else None


NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def projects_dir(cwd: Path, env: Mapping[str, str]) -> Path:
    """Where projects live: $NOVEL_PROJECTS_DIR, else ./projects."""
    configured = env.get("NOVEL_PROJECTS_DIR")
    return Path(configured).expanduser() if configured else Path(cwd) / "projects"


LAST_USED = ".novel-last"     # in the projects folder: the name of the project last used


def find_project(spec: str | None, cwd: Path, env: Mapping[str, str]) -> Project:
    """Resolve `-p`: a path, a name under the projects folder, or (no spec) the project
    in the current directory (or a folder above it, as git finds its repository), else
    the single project under the projects folder, else the one last used there
    (`remember_project`). A project chosen without `-p` from several says why in
    `project.chosen`; a `-p` that names nothing suggests the nearest names."""
    base = projects_dir(cwd, env)
    here = enclosing_project(cwd)
    if spec:
        # a name is looked for under the projects folder, and beside the project the command
        # runs in (inside projects/book, `-p book` is that one, `-p other` its neighbour)
        bases = [base, *([here.parent] if here is not None else []), Path(cwd)]
        for candidate in (Path(spec).expanduser(), Path(cwd) / spec, *(b / spec for b in bases)):
            if (candidate / PROJECT_FILE).is_file():
                return Project(candidate)
        where = next((b for b in bases if project_names(b)), base)
        names = project_names(where)
        close = difflib.get_close_matches(spec, names, n=3, cutoff=0.5)
        shown = ", ".join(names[:10]) + (f", … ({len(names)} in all)" if len(names) > 10 else "")
        hint = (f"; did you mean {' or '.join(repr(n) for n in close)}?" if close
                else f" (projects there: {shown})" if names else "")
        raise ProjectError(f"no project '{spec}': neither a folder with {PROJECT_FILE} nor a "
                           f"name under {where}{hint}", path=spec)
    if here is not None:
        return Project(here)
    names = project_names(base)
    if len(names) == 1:
        return Project(base / names[0])
    if not names:
        raise ProjectError(f"no project here and none under {base}: create one with "
                           "`novel new NAME`, or name one with -p PATH", path=str(base))
    last = last_project(base)
    if last in names:
        project = Project(base / last)
        project.chosen = (f"using project '{last}' (the last one used under {base}; "
                          f"-p NAME for another: {', '.join(n for n in names if n != last)})")
        return project
    raise ProjectError(f"several projects under {base} ({', '.join(names)}): choose one with "
                       "-p NAME", path=str(base))


def enclosing_project(cwd: Path) -> Path | None:
    """The project folder `cwd` is in (itself or a folder above it, as git finds its
    repository), or None."""
    for folder in (Path(cwd), *Path(cwd).parents):
        if (folder / PROJECT_FILE).is_file():
            return folder
    return None


def project_names(base: Path) -> list[str]:
    """The projects under the projects folder, by name."""
    return sorted(p.parent.name for p in base.glob(f"*/{PROJECT_FILE}")) if base.is_dir() else []


def last_project(base: Path) -> str:
    """The name of the project last used under `base` ("" if none is remembered)."""
    try:
        return (base / LAST_USED).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return ""


def remember_project(project: Project, base: Path) -> None:
    """Remember `project` as the last used under the projects folder `base` (when it is
    one of its projects; a project elsewhere, or a folder that cannot be written, is
    not remembered)."""
    if project.root.parent != Path(base).resolve() or last_project(base) == project.name:
        return
    try:
        atomic_write(base / LAST_USED, project.name + "\n")
    except OSError:
        pass


def create_project(root: Path, story: Mapping[str, Any], *, config: Mapping[str, Any] | None = None,
                   files: Mapping[str, str] | None = None) -> Project:
    """Make a new project folder with project.yaml and empty memory (and `files`: more
    files by their path in the folder, with their text: style.yaml).

    Refuses to touch a folder that already holds a project.
    """
    root = Path(root)
    if (root / PROJECT_FILE).exists():
        raise ProjectError(f"{root} already holds a project; choose another name",
                           path=str(root))
    if root.exists() and any(root.iterdir()):
        raise ProjectError(f"{root} exists and is not empty; choose another name",
                           path=str(root))
    project = Project(root)
    check_story_lengths(story, str(project.project_file))
    data = {k: v for k, v in story.items() if v not in (None, "")}
    data.update({k: v for k, v in (config or {}).items() if v})
    txn = project.transaction()
    txn.stage(project.project_file, dump_yaml(data))
    txn.stage(project.memory_dir / "facts.yaml", dump_yaml({"facts": []}))
    project.stage_state(txn, {"tick": 0})
    txn.stage(project.lore_dir / "README.md",
              "Lorebook entries: one YAML file each, with `keys`, `content` and `priority`.\n")
    for name, text in (files or {}).items():
        txn.stage(root / name, text)
    memory = project.memory_dir
    for folder in (project.scenes_dir, project.plans_dir, memory / "characters",
                   memory / "locations", memory / "loops", memory / "relationships",
                   project.summaries_dir, project.log_dir):
        folder.mkdir(parents=True, exist_ok=True)
    txn.commit()
    return project
