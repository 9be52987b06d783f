"""Stage 2, write: the writer turns the plan and the context into prose.

An answer cut off by the token limit (finish_reason "length") is continued: the
model is asked, up to MAX_CONTINUATIONS times, to go on from where it stopped,
and the pieces are joined. If it is still cut off, the prose is trimmed to its
last complete sentence, and the tick says so; a scene is never committed
mid-word.
"""

from __future__ import annotations

import re

from ..errors import ModelResponseError
from ..models.ask import Room, StageCall, ask_text
from ..models.base import ChatModel, Request
from ..prose_cleanup import cut_to_sentence

MAX_CONTINUATIONS = 2
MIN_CONTINUATION = 48     # a continuation with less room than this is not asked for
CONTINUE = ("Your answer was cut off by the length limit. Continue the scene exactly where "
            "it stopped, without repeating anything and without a heading, and bring it to an "
            "end within a few sentences.")
_ENDS_SENTENCE = re.compile(r"[.!?…][\"'”’)\]*_]*$")


def clean_prose(text: str) -> str:
    """Strip what models wrap prose in: code fences, a leading 'Scene N' heading."""
    text = text.strip()
    fenced = re.fullmatch(r"```(?:markdown|md)?\s*(.*?)```", text, re.S)
    if fenced:
        text = fenced.group(1).strip()
    text = re.sub(r"^#+\s*scene\s+\d+[^\n]*\n+", "", text, flags=re.I)
    return text.strip()


def trim_to_sentence(text: str) -> str:
    """`text` up to its last complete sentence (unchanged if it ends one); a text in
    which no sentence ends is a ModelResponseError."""
    text = text.rstrip()
    if _ENDS_SENTENCE.search(text):
        return text
    cut = cut_to_sentence(text, max(1, len(text.split()) - 1))
    if cut.mid_sentence or not cut.text:
        raise ModelResponseError("writer: the answer was cut off before its first sentence "
                                 "ended (raise llm.writer_max_tokens)", stage="writer", raw=text)
    return cut.text


def _continue(model: ChatModel, messages: list[dict[str, str]], call: StageCall,
              max_tokens: int, room: Room | None) -> str:
    """Ask for more while the last answer was cut off; the pieces joined as sent. Each
    request must fit the window with its answer (`room`): the draft so far makes it
    longer, so its answer may be shorter, and none is sent without MIN_CONTINUATION."""
    text = "".join(c.text for c in call.completions)
    for _ in range(MAX_CONTINUATIONS):
        if call.completions[-1].finish_reason != "length":
            break
        again = [*messages, {"role": "assistant", "content": text},
                 {"role": "user", "content": CONTINUE}]
        left = min(max_tokens, room(again)) if room else max_tokens
        if left < MIN_CONTINUATION:
            break
        more = model.complete(Request(stage="writer", max_tokens=left, messages=again))
        call.completions.append(more)
        text += more.text
    return text


def run(model: ChatModel, messages: list[dict[str, str]], *, max_tokens: int,
        room: Room | None = None) -> tuple[str, StageCall]:
    """Write the scene's prose from the writer's prompt (continued within the window,
    `room`, then trimmed to a sentence, when the token limit cuts it off;
    `call.warning` says so)."""
    _, call = ask_text(model, "writer", messages, max_tokens)
    prose = clean_prose(_continue(model, messages, call, max_tokens, room))
    if call.completions[-1].finish_reason == "length":
        prose = trim_to_sentence(prose)
        tries = len(call.completions) - 1
        call.warning = (f"the writer's answer was still cut off after {tries} "
                        f"continuation{'s' * (tries != 1)}: trimmed to its last complete "
                        "sentence (raise llm.writer_max_tokens)")
    return prose, call
