"""The one small interface every model implements: a request in, a completion out."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable


@dataclass(frozen=True)
class Usage:
    """Tokens a call consumed, as the provider reported them (0 when unknown).

    `cached_tokens` and `cache_write_tokens` are part of `prompt_tokens`: the prompt's
    tokens read from the provider's prompt cache, and those written to it (Anthropic
    bills a write above the input price)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class MemoryView(Protocol):
    """What a model may read of the story's memory (story/memory/store.py's Memory): never change it."""

    @property
    def characters(self) -> Mapping[str, Mapping[str, Any]]: ...

    @property
    def locations(self) -> Mapping[str, Mapping[str, Any]]: ...

    def open_loops(self) -> Sequence[Mapping[str, Any]]: ...

    def find_loop(self, ref: str) -> Mapping[str, Any] | None: ...


@dataclass(frozen=True)
class StoryView:
    """Where the story stands as a request goes out, for a model that answers from the
    story rather than from its prompt (the offline model, a test's scripted one); a
    served model never sees it. The tick makes one from its draft at each stage
    (tick/draft.py), the summarizer, the outline and a revise from what they ask.

    `job`: what this call asks beyond the scene: a summary's kind, range and items to
    name ("kind", "first", "last", "items", "previous", "new"), an outline level's values
    ("level", "count", ...)."""

    story: Any = None                   # the book's Story (name, premise, protagonist)
    memory: MemoryView | None = None    # the tick's memory, as the stage sees it
    tick: int = 0
    plan: Any = None                    # the tick's Plan, once planned
    prose: str = ""                     # the tick's prose, once written
    min_words: int = 200
    max_words: int = 400
    steer: str = ""                     # the author's note in force for this tick
    target_tension: int | None = None   # the scene's target, in a book with an outline
    due: tuple[str, ...] = ()           # the ids of the loops due, most urgent first
    no_new_loops: bool = False          # the final act of a book with an outline
    job: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Request:
    """One chat call. `json_schema` set means the stage wants a JSON object back.

    `grammar` (llama.cpp GBNF) constrains what a local model can generate; a provider
    that cannot take one ignores it. `stop` ends the answer at any of its strings.
    `max_words`: a streaming model stops reading the answer once it has more words than
    this (the caller cuts it to a sentence within them: what would follow goes unread and
    unwritten); its finish_reason is then WORDS. A model that does not stream ignores it.
    `stable_prefix`: how many characters at the start of the first user message stay
    the same from tick to tick until the next checkpoint (0: none known), where a
    provider with an explicit prompt cache puts its breakpoint (Anthropic's
    cache_control); the others ignore it. `growing_prefix`: how many characters of it
    the next tick's prompt begins with too, between two compactions of the recent
    scenes (the stable prefix and the scenes appended after it; 0: none known).
    `view`: where the story stands as the request goes out (a StoryView, read only),
    for a model that answers from the story rather than its prompt (the offline model);
    the others ignore it.
    """

    stage: str
    messages: list[dict[str, str]]
    max_tokens: int
    json_schema: dict[str, Any] | None = None
    schema_name: str = "answer"
    temperature: float | None = None
    grammar: str | None = None
    stop: tuple[str, ...] = ()
    max_words: int = 0
    stable_prefix: int = 0
    growing_prefix: int = 0
    view: StoryView | None = None



WORDS = "words"    # a Completion's finish_reason when it stopped at its Request's max_words
NO_KEY = "not-needed"   # a server that wants no key (the SDKs want a string): never masked


@dataclass(frozen=True)
class Completion:
    """The answer of one call."""

    text: str
    usage: Usage = field(default_factory=Usage)
    finish_reason: str = "stop"
    model: str = ""
    latency: float = 0.0
    # How the JSON was asked for: "json_schema", "json_object", "text", "tool_use" or "" (prose).
    response_format: str = ""
    attempts: int = 1        # requests the client made for it (retries and fallbacks included)
    # From a small local model, which writes an earlier scene's paragraphs again with a
    # word changed: the writer drops near-copies of them too, not only exact ones.
    # (Other providers' prose is held to exact copies: the offline model's templated
    # paragraphs share their word runs by design, and a strong model's refrain is prose.)
    near_copies: bool = False
    notice: str = ""         # what the user should know of how the model answered


@dataclass(frozen=True)
class Progress:
    """How a streamed call is going: what a live progress line shows.

    `tokens` counts the answer's tokens so far (one per streamed piece); before the
    first one the server may say how much of the prompt it has read
    (`prompt_done` of `prompt_total`, `cached` of them reused from its prompt cache).
    """

    stage: str
    seconds: float                # since the request was sent
    tokens: int = 0
    generating: float = 0.0       # seconds since the first token
    prompt_done: int = 0
    prompt_total: int = 0
    cached: int = 0

    @property
    def tokens_per_second(self) -> float:
        """The answer's speed so far (0 before two tokens have come)."""
        return (self.tokens - 1) / self.generating if self.tokens > 1 and self.generating else 0.0


OnProgress = Callable[[Progress], None]


@runtime_checkable
class ChatModel(Protocol):
    """What the pipeline needs of a model.

    `describe()` is the one line `novel tick` prints ("local model SmolLM2-135M ...").
    `complete()` raises ModelError when the call fails after retries (a served model's
    call loop: models/served.py).
    """

    def describe(self) -> str: ...

    def complete(self, request: Request) -> Completion: ...


def one_line(text: str, secret: str | None, limit: int = 300) -> str:
    """`text` as one line of an error: whitespace collapsed, `secret` (an API key) masked,
    cut to `limit` characters."""
    line = " ".join(str(text).split())
    if secret and secret != NO_KEY:
        line = line.replace(secret, "***")
    return line if len(line) <= limit else line[: limit - 3] + "..."
