"""Stage 2, write: the writer turns the plan and the context into prose.

The token limit follows generation.scene_max_words (config.max_tokens), so an
answer cut off by it (finish_reason "length") has usually written enough: it is
trimmed to its last complete sentence, and the tick says so. Only a scene still
under generation.scene_min_words is continued: the model is asked, up to
MAX_CONTINUATIONS times, to go on from where it stopped, and the pieces are joined.
A scene over generation.scene_max_words is cut at its last sentence within them. A
scene is never committed mid-word. The markdown a small model puts around the
prose (headings, tables, rules, a restated title) is taken off
(prose_cleanup.clean_scaffolding), and so are paragraphs it copied word for word from
its prompt (prose_cleanup.drop_copied: small models repeat the last scene's ending).
"""

from __future__ import annotations

import re

from ..errors import ModelResponseError
from ..models.ask import Room, StageCall, ask_text
from ..models.base import ChatModel, Request
from ..prose_cleanup import clean_scaffolding, cut_to_sentence, drop_copied

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
              max_tokens: int, min_words: int, room: Room | None) -> str:
    """Ask for more while the last answer was cut off under `min_words`; the pieces
    joined as sent. Each request must fit the window with its answer (`room`): the
    draft so far makes it longer, so its answer may be shorter, and none is sent
    without MIN_CONTINUATION."""
    text = "".join(c.text for c in call.completions)
    for _ in range(MAX_CONTINUATIONS):
        if call.completions[-1].finish_reason != "length" or len(text.split()) >= min_words:
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


def _without_copies(prose: str, messages: list[dict[str, str]], call: StageCall) -> str:
    """The prose without the paragraphs it copied from its prompt (`call.warning` says
    how many); an answer that is nothing but copies is a ModelResponseError."""
    kept, copied = drop_copied(prose, "\n".join(m["content"] for m in messages))
    if copied and not kept:
        raise ModelResponseError("writer: the answer only repeats its prompt (the earlier "
                                 "scenes) word for word", stage="writer", raw=prose)
    if copied:
        call.warning = "; ".join(filter(None, [call.warning, (
            f"{copied} paragraph{'s' if copied > 1 else ''} copied word for word from the "
            "prompt (an earlier scene) taken out")]))
    return kept


def run(model: ChatModel, messages: list[dict[str, str]], *, max_tokens: int,
        min_words: int = 0, max_words: int = 0, title: str = "",
        room: Room | None = None) -> tuple[str, StageCall]:
    """Write the scene's prose from the writer's prompt, without scaffolding (`title`
    restated at the top goes too). Cut off by the token limit, it is continued (within
    the window, `room`) while under `min_words`, then trimmed to a sentence; over
    `max_words` it is cut at a sentence within them (`call.warning` says what was done)."""
    _, call = ask_text(model, "writer", messages, max_tokens)
    prose = clean_scaffolding(_continue(model, messages, call, max_tokens, min_words, room),
                              title)
    prose = _without_copies(prose, messages, call)
    if call.completions[-1].finish_reason == "length":
        prose = trim_to_sentence(prose)
        tries = len(call.completions)
        after = f" after {tries - 1} continuation{'s' if tries > 2 else ''}" if tries > 1 else ""
        call.warning = "; ".join(filter(None, [call.warning, (
            f"the writer's answer was cut off at the {max_tokens}-token limit{after}: "
            "trimmed to its last complete sentence (the limit follows "
            "generation.scene_max_words, or set llm.writer_max_tokens)")]))
    words = len(prose.split())
    cut = cut_to_sentence(prose, max_words) if max_words and words > max_words else None
    if cut is not None and not cut.mid_sentence:
        prose = cut.text
        call.warning = "; ".join(filter(None, [call.warning, (
            f"the scene had {words} words: cut at its last sentence within "
            f"generation.scene_max_words ({max_words})")]))
    return prose, call
