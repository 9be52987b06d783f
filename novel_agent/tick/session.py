"""A session: one command's working set on one project.

Every command that calls a model or builds a prompt opens one (`novel tick`,
`novel run`, `novel context`, `novel summarize`, `novel import`), so the things
a tick needs are made in exactly one place:

- each stage's model (llm.stages: `stage(name)`, a StageModel), stages with the same
  settings sharing one (`StageModels`); `model` sends each request to its stage's;
- the model, built by `models.get_model` and wrapped in a RecordingModel that
  keeps one usage row per call, told which tick it is working for, and priced
  at `price` (models.prices.price_for: None when unknown), and that sends no
  request over the model's window (`over_window`: the last guard behind each
  stage's own fitting of its prompts, repairs, continuations and revisions);
- the token counter (`counter_for`, the one counter factory; a stage's own is its
  StageModel's), its counts
  persisted in `.novel/index.db`; a local GGUF model counts with its own
  tokenizer (the running model's, or llama.cpp started for counting only);
- the model's limits, read once from the model table;
- the summary-file cache, owned here so it lives as long as the session;
- memory as the last landed tick left it (`memory`, story/memory/kept.py: the next
  tick reads only the files changed since);
- what a prompt chose that is to stay put for a while (`remembered`: the planner's
  settled facts), forgotten when a sync finds files edited by hand;
- the index, brought in step with the files when the session opens (a
  missing, garbage or stale index.db is healed and said in one line), again
  before each tick, and after each commit for the files it wrote (`sync_index`);
- the clocks (`now` for timestamps written to files, `clock` for durations);
- Python's cyclic garbage collector kept off what outlives the ticks (`landed`, which
  also tells `memory` that the tick's memory is now what the files hold).

`flush()` writes the buffered counts and usage rows (to the index and to
`.novel/usage.jsonl`, see index/ledger.py; the pipeline calls it after every tick,
failed ones included); `close()` flushes, closes the index and stops the model
(a local llama.cpp server with it).
"""

from __future__ import annotations

import gc
import sqlite3
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from novel_agent.clock import utc_now
from novel_agent.config import stages as declared
from novel_agent.config.budget import Budget, ModelLimits, stage_budget
from novel_agent.config.settings import Config
from novel_agent.history.seen import SeenFiles
from novel_agent.index.db import Index, unreadable
from novel_agent.index.embeddings import Embedder, EmbeddingSettings
from novel_agent.index.ledger import record
from novel_agent.index.seen import Looked
from novel_agent.index.sync import SyncReport, heal_index, open_index, sync
from novel_agent.models import get_model, model_id, provider_for
from novel_agent.models.base import ChatModel, Completion, OnProgress, Request
from novel_agent.models.limits import limits_for
from novel_agent.models.offline import OfflineModel
from novel_agent.models.prices import Price, model_price, price_for
from novel_agent.models.providers import OFFLINE, Provider
from novel_agent.models.recording import RecordingModel
from novel_agent.story.memory.kept import KeptMemory
from novel_agent.story.memory.store import Memory
from novel_agent.story.project.folder import Project
from novel_agent.story.summaries import DocCache
from novel_agent.text.tokens import CountStore, TokenCounter, Tokenizer

ModelFactory = Callable[[], ChatModel]
ModelBuilder = Callable[[Config], ChatModel]     # a stage's model from its configuration
# The llm keys a model is built from: stages that agree on them share one model.
BUILD_KEYS = ("model", "base_url", "api_key_env", "local_model", "local_context", "timeout",
              "max_retries", "temperature", "seed")
# Ticks between two full collections of Python's garbage, each followed by gc.freeze():
# a full collection walks every object the collector tracks, and memory's parse cache,
# the indexes and the counts grow with the book (at tick 600 of a stress run one cost
# more than the rest of a tick); frozen, what outlives ticks is walked once per
# FREEZE_EVERY ticks, not at every full collection the tick's own objects bring about.
FREEZE_EVERY = 50



def counter_for(config: Config, store: CountStore | None = None,
                tokenizer: Tokenizer | None = None) -> TokenCounter:
    """The token counter of the configured model: the one place a counter is made. A local
    GGUF model counts with its own tokenizer (`tokenizer`, else llama.cpp's on first use:
    any provider with a tokenizer of its own), unless context.encoding names a tiktoken
    encoding."""
    own = provider_for(config).tokenizer
    if tokenizer is None and not config.context.encoding and own is not None:
        tokenizer = own(config)
    return TokenCounter(model_id(config), config.context.encoding, store=store,
                        tokenizer=None if config.context.encoding else tokenizer)


@dataclass
class StageModel:
    """What one stage's requests go to: its configuration (Config.for_stage), its model
    (the inner one, shared by the stages built alike) recorded at its price, its counter,
    limits and provider."""

    config: Config
    model: ChatModel
    counter: TokenCounter
    limits: ModelLimits
    price: Price | None
    provider: Provider
    recording: RecordingModel | None = None


class StageModels:
    """The session's model as the stages see it: a request goes to its stage's recording
    model (`names` to the planner's, a stage with no model of its own to llm's); their
    rows are one list, in call order."""

    def __init__(self, entries: Mapping[str, StageModel], default: StageModel):
        self.entries, self.default = dict(entries), default

    def of(self, stage: str) -> RecordingModel:
        entry = self.entries.get(declared.model_of(stage), self.default)
        assert entry.recording is not None
        return entry.recording

    def recordings(self) -> list[RecordingModel]:
        """Each recording model once."""
        seen = {id(e): e.recording for e in (self.default, *self.entries.values())}
        return [r for r in seen.values() if r is not None]

    @property
    def inner(self) -> ChatModel:
        """llm's model (every stage's, when llm.stages gives none of its own)."""
        return self.of("").inner

    @property
    def tick(self) -> int:
        return self.of("").tick

    @tick.setter
    def tick(self, tick: int) -> None:
        for recording in self.recordings():
            recording.tick = tick

    def describe(self) -> str:
        own = {self.of(stage).describe() for stage in self.entries}
        first = self.of("").describe()
        return first if not own - {first} else "; ".join(
            [first, *(f"{stage}: {self.of(stage).describe()}" for stage in self.entries
                      if self.of(stage).describe() != first)])

    def complete(self, request: Request) -> Completion:
        return self.of(request.stage).complete(request)

    def drain(self) -> list[dict[str, Any]]:
        """The rows recorded since the last drain, of every stage, in call order."""
        return self.of("").drain()

    def close(self) -> None:
        """Stop every model (a local llama.cpp server with it), each once."""
        models = {id(r.inner): r.inner for r in self.recordings()}
        for model in models.values():
            close = getattr(model, "close", None)
            if callable(close):
                close()


class Session:
    """The model, counter, limits and clocks one command uses on one project."""

    def __init__(self, project: Project, config: Config, model: ChatModel, *,
                 counter: TokenCounter, limits: ModelLimits,
                 index: Index | None = None, record: bool = True,
                 price: Price | None = None, provider: Provider = OFFLINE,
                 stages: Mapping[str, StageModel] | None = None,
                 now: Callable[[], datetime] = utc_now,
                 clock: Callable[[], float] = time.monotonic):
        self.project, self.config = project, config
        self.notes: list[str] = []       # what opening it did, for the first tick to say
        default = StageModel(config, model, counter, limits, price, provider)
        rows: list[dict[str, Any]] = []
        for entry in {id(e): e for e in (default, *(stages or {}).values())}.values():
            entry.recording = RecordingModel(
                entry.model, model=entry.limits.model, provider=entry.provider.name,
                price=entry.price, now=now, clock=clock, refuse=self.over_window,
                rows=rows)
        self.model = StageModels(stages or {}, default)
        self.counter, self.limits, self.index = counter, limits, index
        self.record, self.now, self.clock = record, now, clock
        self.docs = DocCache()
        self.memory = KeptMemory(project.memory_dir)
        self.seen = SeenFiles(project.root, time.time_ns)   # the files at the last history entry
        self.embedder: Embedder | None = None
        self._kept: dict[Any, Any] = {}
        self._looked: Looked = {}     # what the last sync looked at (see index.sync)
        self.begun_at: int | None = None   # the history's look the last tick's reading used
        self._landed = 0
        self._frozen = False

    @classmethod
    def open(cls, project: Project, config: Config, env: Mapping[str, str] | None = None, *,
             make_model: ModelFactory | None = None, stand_in: bool = False,
             build_model: ModelBuilder | None = None,
             on_progress: OnProgress | None = None,
             now: Callable[[], datetime] = utc_now,
             clock: Callable[[], float] = time.monotonic) -> Session:
        """Open a session: each stage's model from `config` (llm.stages; stages built
        alike share one), or `make_model()` for all, or `build_model(its config)` for each;
        the counters on the project's index, the models' limits and prices. A streaming
        model (local) tells `on_progress` how each call is going.

        `stand_in=True` answers with the offline model instead of the configured one
        and records no usage (for `novel context`, which must call no LLM); the
        counter, the limits and the price stay those of the configured model.
        """
        index, line = open_index(project, clock)
        built: dict[Any, ChatModel] = {}
        counters: dict[Any, TokenCounter] = {}

        def entry(mine: Config) -> StageModel:
            provider = provider_for(mine)
            key = (provider.name, *(getattr(mine.llm, k) for k in BUILD_KEYS))
            if key not in built:
                if stand_in:
                    built[key] = OfflineModel(seed=config.llm.seed)
                elif make_model is not None:     # one model for every stage
                    built[key] = built.setdefault("made", make_model())
                elif build_model is not None:
                    built[key] = build_model(mine)
                else:
                    built[key] = get_model(mine, env or {}, on_progress=on_progress)
            model = built[key]
            tokenizer = getattr(model, "tokenizer", None)
            counted = (model_id(mine), mine.context.encoding, id(tokenizer))
            if counted not in counters:
                counters[counted] = counter_for(mine, index, tokenizer=tokenizer)
            return StageModel(mine, model, counters[counted], limits_for(mine), price_for(mine),
                              provider)

        default = entry(config.for_stage(""))
        stages = {stage: entry(config.for_stage(stage)) for stage in declared.names(own_model=True)
                  if stage in config.llm.stages}
        session = cls(project, config, default.model, counter=default.counter,
                      limits=default.limits, index=index, record=not stand_in,
                      price=default.price, provider=default.provider, stages=stages, now=now,
                      clock=clock)
        session.notes += [line] if line else []
        settings = EmbeddingSettings.of(config)
        if settings.enabled:
            session.embedder = Embedder(settings, index, env or {}, price=model_price(settings.model),
                                        timeout=config.llm.timeout, cached_only=stand_in,
                                        now=now, clock=clock)
        return session

    def stage(self, name: str) -> StageModel:
        """What stage `name`'s requests go to: its model, counter, limits, price, provider."""
        return self.model.entries.get(declared.model_of(name), self.model.default)

    @property
    def price(self) -> Price | None:
        """llm's price (a stage's own: `stage(name).price`)."""
        return self.model.default.price

    @property
    def provider(self) -> Provider:
        """llm's provider (a stage's own: `stage(name).provider`)."""
        return self.model.default.provider

    @provider.setter
    def provider(self, provider: Provider) -> None:
        """Every stage's provider is `provider` (as if it ran on it: for tests)."""
        for entry in (self.model.default, *self.model.entries.values()):
            entry.provider = provider

    def unpriced(self) -> list[str]:
        """The models of this session whose price is unknown (a stage's among them), each
        once: a cost ceiling cannot be kept on them."""
        entries = (self.model.default, *self.model.entries.values())
        return list(dict.fromkeys(e.limits.model for e in entries if e.price is None))

    def lean_for(self, stage: str) -> bool:
        """Whether `stage` is held to its lean schema and sizes (fewer tools and items, no
        audit keys, a short outline): on an embedded local model, which writes twenty
        tokens a second and fills what it is given room for."""
        return self.stage(stage).provider.local

    @property
    def live_index(self) -> Index:
        """The index of an open session (`Session.open` makes one; `close` lets it go):
        its usage rows are what the cost ceilings count."""
        assert self.index is not None, "the session is closed"
        return self.index

    @property
    def knowledge(self) -> bool:
        """Whether the extractor is asked for the continuity audit's keys: not of an
        embedded local model (a 1.5B fills them with sentences, a third of its answer)."""
        return not self.lean_for("extractor")

    @property
    def ending(self) -> bool:
        """Whether the writer is shown the newest scene's ending rather than whole scenes
        (context.full_text; auto: on an embedded local model, which copies whole scenes)."""
        wanted = self.config.context.full_text
        return wanted == "ending" or (wanted == "auto" and self.lean_for("writer"))

    def over_window(self, request: Request) -> str:
        """Why `request` may not be sent: its prompt and its answer's limit are over the
        stage's model's window ("" when they fit). Every stage fits what it sends; this is
        the guard behind them, so that nothing is sent over the window, ever."""
        mine = self.stage(request.stage)
        tokens, window = mine.counter.count_messages(request.messages), mine.limits.window
        if tokens + request.max_tokens <= window:
            return ""
        return (f"{request.stage}: the request was not sent: {tokens:,} prompt tokens and "
                f"{request.max_tokens:,} for the answer are over the model's {window:,}-token "
                "window")

    def budget(self, stage: str) -> Budget:
        """The prompt budget of `stage` for its own model."""
        return stage_budget(self.config, stage, self.stage(stage).limits)

    def counter_of(self, stage: str) -> TokenCounter:
        """The token counter of `stage`'s model."""
        return self.stage(stage).counter

    def sync_index(self, memory: Any = None, paths: Iterable[Path | str] | None = None,
                   listed: Any = None, moved: Iterable[str] | None = None) -> SyncReport:
        """Bring the search index in step with the files (see index.sync.sync): all of
        them (memory's folders as reading `memory` saw them, when `listed`; only the
        files whose stat moved since the session's last sync are asked about), or only
        `paths` (the files a tick just wrote, with `memory` the kept memory it committed:
        of facts.yaml, only the facts it added). `moved`, instead of all of them: the
        only files (relative to the project) that may have changed since the last sync,
        as the history's look found them (once a sync of all has been made). Files
        changed by anyone else make the session forget what it `remembered`."""
        if self.index is None:
            return SyncReport()
        kept = self.memory
        before = kept.files.facts if paths is not None and memory is kept.work else None
        by_hand = paths is None            # (facts.yaml, if `moved` names it: read whole)
        if by_hand and moved is not None and self._looked:
            paths = sorted(moved)
        report = sync(self.project, self.index, memory, clock=self.clock, paths=paths,
                      listed=listed, last=self._looked, facts_before=before)
        if by_hand and report.changed:
            self._kept.clear()
        return report

    def heal_index(self, exc: BaseException) -> str:
        """When `exc` says the index is damaged (index.db.unreadable), rebuild it from the
        files in place (index.sync.heal_index) and return the line that says so; else ""."""
        if self.index is None or not unreadable(exc):
            return ""
        self._looked, self._kept = {}, {}
        return heal_index(self.project, self.index, exc, self.clock)

    def landed(self, memory: Memory | None = None) -> None:
        """A tick has landed, having committed `memory` (the next tick starts from it: see
        `self.memory`, the KeptMemory): after the second (a command that lands one pays
        nothing) and every FREEZE_EVERY after it, collect the garbage and freeze what is
        left (see FREEZE_EVERY); close() unfreezes it."""
        if memory is not None:
            self.memory.landed(memory)
        self._landed += 1
        if self._landed % FREEZE_EVERY == 2 % FREEZE_EVERY:
            gc.collect()
            gc.freeze()
            self._frozen = True

    def remembered(self, key: Any, make: Callable[[], Any]) -> Any:
        """What `make()` gave for `key`, made once: the newest key of its kind (`key[0]`)
        is kept, the one before forgotten."""
        if key not in self._kept:
            self._kept = {k: v for k, v in self._kept.items() if k[0] != key[0]}
            self._kept[key] = make()
        return self._kept[key]

    def at_tick(self, tick: int) -> None:
        """Say which tick the next model calls work for (their usage rows carry it)."""
        self.model.tick = tick
        if self.embedder is not None:
            self.embedder.tick = tick

    @property
    def tick(self) -> int:
        """The tick the model calls work for (`at_tick`)."""
        return self.model.tick

    def take_notes(self) -> list[str]:
        """What opening the session did that no one has said yet (an index healed), once."""
        notes, self.notes = self.notes, []
        return notes

    def flush(self, sync: bool = True) -> None:
        """Write the buffered token counts to the index, the usage rows to
        `.novel/usage.jsonl` and the index, and bring the search index in step with
        what this session wrote (summaries made by `novel summarize`, say; `sync=False`:
        the caller just did, a tick with the files it wrote)."""
        rows = self.model.drain() + (self.embedder.drain() if self.embedder else [])
        if self.index is None:
            return
        self.index.flush()
        if sync:
            self.sync_index()
        if self.record:
            record(self.project, self.index, rows)

    def close(self) -> None:
        """Flush, close the index and stop the model (a local server with it); what
        `landed` froze is left to the collector again."""
        try:
            self.flush()
        finally:
            if self._frozen:
                gc.unfreeze()
            self.seen.close()
            if self.index is not None:
                index, self.index = self.index, None
                index.db.close()     # flushed above
            self.model.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, exc_type: Any, *exc: Any) -> None:
        try:
            self.close()
        except (OSError, sqlite3.Error):
            if exc_type is None:
                raise        # else the error in flight is the one to report
