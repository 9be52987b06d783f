"""Calling a model for a stage: one request, a JSON answer repaired once, a record of it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from novel_agent.errors import ModelResponseError
from novel_agent.models.base import ChatModel, Completion, Request, StoryView
from novel_agent.text.lenient_json import parse_json

T = TypeVar("T")
Room = Callable[[list[dict[str, str]]], int]   # messages -> tokens the window leaves
EXCERPTS = (4000, 600, 0)     # how much of a bad answer a repair request may quote

@dataclass
class StageCall:
    """What one stage sent and got: for progress lines, usage logs and reports."""

    stage: str
    messages: list[dict[str, str]]
    completions: list[Completion] = field(default_factory=list)
    seconds: float = 0.0
    warning: str = ""       # what the user should know of an answer that was used anyway

    def warn(self, text: str) -> None:
        """Add `text` to the warning ("; " between what is said)."""
        self.warning = "; ".join(filter(None, [self.warning, text]))

    def note(self, completion: Completion) -> None:
        """Record `completion`, and what its model said of it (`notice`) as a warning."""
        self.completions.append(completion)
        self.warn(completion.notice)

    @property
    def prompt_tokens(self) -> int:
        return sum(c.usage.prompt_tokens for c in self.completions)

    @property
    def completion_tokens(self) -> int:
        return sum(c.usage.completion_tokens for c in self.completions)

    @property
    def cached_tokens(self) -> int:
        return sum(c.usage.cached_tokens for c in self.completions)


class Told:
    """A model whose requests say what the stage knows of them: where their prompt's
    stable and growing prefixes end (Request.stable_prefix, growing_prefix: every request
    a stage makes from one prompt, a repair, a continuation, the scene asked anew, begins
    with that prompt's first user message), and where the story stands (Request.view)."""

    def __init__(self, model: ChatModel, stable: int = 0, growing: int = 0,
                 view: StoryView | None = None):
        self.model, self.stable, self.growing, self.view = model, stable, growing, view

    def describe(self) -> str:
        return self.model.describe()

    def complete(self, request: Request) -> Completion:
        return self.model.complete(replace(
            request, stable_prefix=request.stable_prefix or self.stable,
            growing_prefix=request.growing_prefix or self.growing,
            view=request.view if request.view is not None else self.view))


def told(model: ChatModel, *, stable: int = 0, growing: int = 0,
         view: StoryView | None = None) -> ChatModel:
    """`model`, its requests told that the first `stable` characters of their first user
    message stay the same until a checkpoint and the first `growing` until the recent
    scenes are compacted, and where the story stands (`view`): see Told; `model` itself
    when there is nothing to tell."""
    return Told(model, stable, growing, view) if stable > 0 or growing > 0 or view is not None \
        else model


def ask_text(model: ChatModel, stage: str, messages: list[dict[str, str]],
             max_tokens: int, *, grammar: str | None = None,
             stop: tuple[str, ...] = (), max_words: int = 0) -> tuple[str, StageCall]:
    """Ask for prose (held to `grammar` where the model takes one, ended at `stop`, or
    past `max_words` by a model that streams: see Request)."""
    call = StageCall(stage, messages)
    completion = model.complete(Request(stage=stage, messages=messages, max_tokens=max_tokens,
                                        grammar=grammar, stop=stop, max_words=max_words))
    call.note(completion)
    call.seconds = completion.latency
    text = completion.text.strip()
    if not text:
        raise ModelResponseError(f"{stage}: the model answered nothing", stage=stage)
    return text, call


def ask_json(model: ChatModel, stage: str, messages: list[dict[str, str]], max_tokens: int,
             schema: dict[str, Any], convert: Callable[[dict[str, Any]], T],
             room: Room | None = None) -> tuple[T, StageCall]:
    """Ask for a JSON answer; if it does not parse or validate, or was cut off by the token
    limit (closed leniently it may have lost fields), ask once more saying why. The
    repair request quotes as much of the bad answer as leaves `room` in the window for
    a whole answer (all of it, a part, or none)."""
    call = StageCall(stage, messages)
    request = Request(stage=stage, messages=messages, max_tokens=max_tokens, json_schema=schema,
                      schema_name=stage)
    completion = model.complete(request)
    call.note(completion)
    try:
        if completion.finish_reason == "length":   # closed leniently, it may lack fields
            raise ModelResponseError(f"{stage}: the answer was cut off at the {max_tokens}-token "
                                     "limit", stage=stage, raw=completion.text)
        return convert(parse_json(completion.text, stage=stage)), _done(call)
    except ModelResponseError as first:
        problem = str(first)
        if completion.finish_reason == "length":
            problem += " (the answer was cut off: keep every string short)"
    repair, left = _repair(messages, completion.text, problem, max_tokens, room)
    if left < 1:
        raise ModelResponseError(f"{problem} (no repair was asked: the window leaves no room "
                                 "for its answer)", stage=stage, raw=completion.text,
                                 call=_done(call))
    completion = model.complete(Request(stage=stage, messages=repair, max_tokens=left,
                                        json_schema=schema, schema_name=stage))
    call.note(completion)
    if completion.finish_reason == "length":
        call.warn(f"the {stage}'s answer was cut off twice at the {max_tokens}-token limit; "
                  f"what it kept is used (raise llm.{stage}_max_tokens)")
    try:
        return convert(parse_json(completion.text, stage=stage)), _done(call)
    except ModelResponseError as second:
        raise ModelResponseError(f"{second} (after one repair attempt)", stage=stage,
                                 raw=completion.text, call=_done(call)) from None


def _repair(messages: list[dict[str, str]], bad: str, problem: str, max_tokens: int,
            room: Room | None) -> tuple[list[dict[str, str]], int]:
    """The repair request and its answer's limit: the bad answer quoted in full when the
    window leaves room for a whole answer after it, else in part, else not at all (the
    limit is under 1 when even then the window leaves no room)."""
    ask = (f"That answer could not be used: {problem}. Answer again with one valid JSON "
           "object only, following the keys asked for.")
    for keep in EXCERPTS:
        quoted = [{"role": "assistant", "content": bad[:keep]}] if keep else []
        repair = [*messages, *quoted, {"role": "user", "content": ask}]
        left = room(repair) if room else max_tokens
        if left >= max_tokens or not keep:
            return repair, min(max_tokens, left)
    raise AssertionError("unreachable")


def _done(call: StageCall) -> StageCall:
    call.seconds = sum(c.latency for c in call.completions)
    return call


def continued(text: str, cut_off: Callable[[str], bool], more: Callable[[str], str | None],
              tries: int) -> tuple[str, int]:
    """An answer cut off by its length limit, continued: while `cut_off(text)` and fewer
    than `tries` continuations were made, `more(text)` asks for the next piece (None: no
    more can be asked). The writer and the summarizer both go on this way; what is still
    cut off afterwards is theirs to trim. Returns the text and the continuations made."""
    made = 0
    while made < tries and cut_off(text):
        piece = more(text)
        if piece is None:
            break
        text, made = text + piece, made + 1
    return text, made
