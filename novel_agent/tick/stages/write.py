"""Stage 2, write: the writer turns the plan and the context into prose.

The token limit follows generation.scene_max_words (config.max_tokens), so an
answer cut off by it (finish_reason "length") has usually written enough: it is
trimmed to its last complete sentence, and the tick says so. Only a scene still
under generation.scene_min_words is continued: the model is asked, up to
MAX_CONTINUATIONS times, to go on from where it stopped, and the pieces are joined.
A scene over generation.scene_max_words is cut at its last sentence within them. A
scene is never committed mid-word. The markdown a small model puts around the
prose (headings, tables, rules, a restated title) is taken off
(text.cleanup.clean_scaffolding), and so are paragraphs it copied, word for word or
nearly, from its prompt or the recent scenes, or said twice (text.cleanup.drop_copied:
small models write the last scene's ending, or its exchange of lines, again), and the
sentences that say its instructions again (text.cleanup.drop_instructions: "Close this
scene; leave no question open."). A local
model's words run together ("onthis island": DRY kept it from saying "on this island"
again) are split where the prompt has the two words side by side (text.cleanup.unglue).

On a local model the prose is generated under PROSE_GRAMMAR, so the prompt's
scaffolding (a "Title:" line, a planner's note, a list) cannot be written at all; on
any model a draft that is mostly scaffolding or copies is asked for once more, and
fails the tick (nothing committed) if it is so again. On a local model a draft that
names none of the scene's people (its POV and planned characters) is asked for once
more too: a small model may wander into a story of its own ("Mr. Johnson", in none of
the plan); the second is kept if it names them, else the first stands.

`STAGE` is the tick's writer (tick/registry.py): its prompt built from the draft, the
scene asked for (`scene`: the one way a scene is asked, for the tick, a scene written
again for its person or tense, and the audit's revision), then checked against the
book's style and phrases, written again once in the wrong person or tense, its stale
sentences mended (tick/stages/mend.py), where `style.rewrite` says.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import replace
from typing import NamedTuple

from novel_agent.config.budget import Budget
from novel_agent.config.settings import WRITER_TOKENS_PER_WORD
from novel_agent.context.tier3 import select_tier3
from novel_agent.context.writer import TIER3_STRETCH, Piece
from novel_agent.errors import ContextOverflowError, ModelResponseError
from novel_agent.models.ask import Room, StageCall, ask_text, continued
from novel_agent.models.base import WORDS, ChatModel, Completion, Request
from novel_agent.story.scenes import word_count
from novel_agent.text.cleanup import (
    clean_scaffolding,
    cut_to_sentence,
    drop_copied,
    drop_instructions,
    prompt_words,
    unglue,
)
from novel_agent.text.names import named_in
from novel_agent.tick import prose_step
from novel_agent.tick.draft import TickContext, TickDraft
from novel_agent.tick.registry import Stage
from novel_agent.tick.stage_prompts import Built, build_writer
from novel_agent.tick.stages import mend

# What the writer may generate, as a llama.cpp grammar (sent to a local model; other
# providers ignore it): paragraphs of prose separated by one blank line, each opening
# with a capital, a quotation mark, a dash or a parenthesis, none holding a bracket, a
# heading's #, a table's |, a fence's ` or markdown emphasis, and no colon in its first
# LABEL_ROOM characters. No line can then be a list item, a heading, a table row or a
# "Title:"/"POV:"/"Scene intention:" label, so the prompt's scaffolding cannot be
# written at all, rather than cut afterwards; a colon later in a sentence ("he said
# only this: run") is prose, and forbidding it made the model end its answer there
# (the demo's scene 2 stopped at "When he finally spoke again,"). It may end with a
# line break or two, so the model can stop after a paragraph's break. Nor can it hold
# CJK characters or fullwidth forms (CJK): Qwen drifts into Chinese mid-sentence (the
# demo's scene 2 ended "to search for线索 scattered throughout Skerry Light").
LABEL_ROOM = 40
CJK = r"\u3000-\u30FF\u3400-\u9FFF\uAC00-\uD7AF\uF900-\uFAFF\uFF00-\uFFEF"
_NOT = r"#*_|\[\]{}<>`~=" + CJK          # never in a paragraph
_PARA = (r"""para ::= [A-Z"“‘'(—–…] (plain{0,ROOM} | plain{ROOM} [^\nNOT]*)
plain ::= [^\n:NOT]
""".replace("ROOM", str(LABEL_ROOM - 1)).replace("NOT", _NOT))
PROSE_GRAMMAR = r"""root ::= para ("\n\n" para)* "\n"? "\n"?
""" + _PARA
# A continuation goes on mid-sentence: its first paragraph may open with anything allowed.
CONTINUATION_GRAMMAR = r"""root ::= [^\nNOT]* ("\n\n" para)* "\n"? "\n"?
""".replace("NOT", _NOT) + _PARA
# Where an answer that turned from the scene to the prompt's scaffolding is stopped
# (every provider; OpenAI takes four).
STOP = ("\nTitle:", "\nScene intention:", "\nPOV:", "\n- Open")
# A draft whose scaffolding and copies outweigh this share of its words is written anew.
MOSTLY = 0.5
MAX_CONTINUATIONS = 2
MIN_CONTINUATION = 48     # a continuation with less room than this is not asked for
CONTINUE = ("Your answer stopped before the scene was done. Continue the scene exactly where "
            "it stopped, without repeating anything and without a heading, and bring it to an "
            "end within a few sentences.")
ANEW = ("Your last answer copied earlier scenes or the notes above. Write this scene anew: "
        "only the story's paragraphs, new events in new sentences, no titles, labels or lists.")
STRAYED = ("Your last answer told another story: none of this scene's people ({cast}) was in "
           "it. Write the scene the notes above ask for, with them in it, from its point of view.")
_ENDS_SENTENCE = re.compile(r"[.!?…][\"'”’)\]*_]*$")


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


def _continue(model: ChatModel, messages: list[dict[str, str]], call: StageCall, answer: str,
              max_tokens: int, min_words: int, room: Room | None, short: bool = False) -> str:
    """Ask for more while `answer` (the last one, to `messages`) was cut off under
    `min_words` (`short`: under them however it stopped); the pieces joined as sent.
    Each request must fit the window with its answer (`room`): the draft so far makes
    it longer, so its answer may be shorter, and none is sent without MIN_CONTINUATION."""
    def cut_off(text: str) -> bool:       # by the limit, or stopped in mid-sentence
        stopped = (short or call.completions[-1].finish_reason == "length"
                   or not _ENDS_SENTENCE.search(clean_scaffolding(text, "").rstrip()))
        return stopped and len(text.split()) < min_words

    def more(text: str) -> str | None:
        again = [*messages, {"role": "assistant", "content": text},
                 {"role": "user", "content": CONTINUE}]
        left = min(max_tokens, room(again)) if room else max_tokens
        if left < MIN_CONTINUATION:
            return None
        call.note(model.complete(Request(
            stage="writer", max_tokens=left, messages=again, grammar=CONTINUATION_GRAMMAR,
            stop=STOP)))
        piece = call.completions[-1].text
        if piece.strip() and _ENDS_SENTENCE.search(text.rstrip()):
            return "\n\n" + piece.lstrip()   # after a whole sentence: a paragraph of its own
        return piece

    return continued(answer, cut_off, more,
                     MAX_CONTINUATIONS)[0]


class Draft(NamedTuple):
    """An answer's prose without its scaffolding and copies: how many paragraphs were
    copies, how many words went in all, whether it was cut off, and the calls it took
    (the first and its continuations)."""

    text: str
    copied: int
    cut_off: bool
    calls: int
    dropped: int = 0       # words of the prompt's scaffolding and copies taken out
    unglued: tuple[str, ...] = ()   # words run together, split again (text.cleanup.unglue)
    told: tuple[str, ...] = ()      # sentences that said the instructions again

    def mostly_junk(self) -> bool:
        """Whether scaffolding and copies were most of the answer."""
        kept = len(self.text.split())
        return kept == 0 or self.dropped > MOSTLY * (kept + self.dropped)


def _draft(answer: str, completion: Completion, calls: int, prompt: str, title: str,
           instructions: str = "") -> Draft:
    cleaned = clean_scaffolding(answer, title)
    text, copied = drop_copied(cleaned, prompt, near=completion.near_copies)
    text, told = drop_instructions(text, instructions)
    dropped = prompt_words(answer) + len(cleaned.split()) - len(text.split())
    text, unglued = unglue(text, prompt) if completion.near_copies else (text, [])
    return Draft(text, copied, completion.finish_reason == "length", calls, dropped,
                 tuple(unglued), tuple(told))


def strays(text: str, cast: Sequence[str]) -> bool:
    """Whether `text` names none of `cast` (the scene's POV and planned characters; false
    when the plan names no one)."""
    people = [name for name in cast if name.strip()]
    return bool(people) and not any(named_in(text, name) for name in people)


def _anew(model: ChatModel, messages: list[dict[str, str]], call: StageCall, max_tokens: int,
          min_words: int, room: Room | None, max_words: int, short: bool,
          why: str = ANEW) -> str | None:
    """The scene asked for once more, told `why` (not to copy), and continued like the
    first answer if it stops short (None without room for it)."""
    again = [*messages[:-1], {"role": messages[-1]["role"],
                              "content": f"{messages[-1]['content']}\n\n{why}"}]
    left = min(max_tokens, room(again)) if room else max_tokens
    if left < MIN_CONTINUATION:
        return None
    more = model.complete(Request(stage="writer", max_tokens=left, messages=again,
                                  grammar=PROSE_GRAMMAR, stop=STOP, max_words=max_words))
    call.note(more)
    return _continue(model, again, call, more.text, max_tokens, min_words, room, short)


def revision(prompt: list[dict[str, str]], draft: str, ask: str) -> list[dict[str, str]]:
    """The audit's revise request: the writer's prompt, its draft, and what to change."""
    return [*prompt, {"role": "assistant", "content": draft}, {"role": "user", "content": ask}]


def revision_limit(tokens: int, budget: Budget, min_words: int) -> int:
    """The answer's limit for a revise request of `tokens` prompt tokens: the writer's
    max_output, or what the window leaves after the request (and the margin) if less; a
    ContextOverflowError, sizes named, when that is less than a scene of `min_words` needs."""
    left = min(budget.max_output, budget.left_after(tokens))
    least = min(budget.max_output, max(MIN_CONTINUATION,
                                       math.ceil(min_words * WRITER_TOKENS_PER_WORD)))
    if left < least:
        raise ContextOverflowError(
            f"writer: the revise request (the scene's prompt at its leanest, the draft and the "
            f"findings) is {tokens:,} tokens, which leaves {max(left, 0):,} of the "
            f"{budget.window:,}-token window (margin {budget.margin:,}) for the answer, under "
            f"the {least:,} a scene of {min_words} words needs",
            section="revision", tokens=tokens, budget=budget.window - budget.margin - least,
            need=tokens)
    return left


def run(model: ChatModel, messages: list[dict[str, str]], *, max_tokens: int,
        min_words: int = 0, max_words: int = 0, title: str = "",
        room: Room | None = None, earlier: str = "",
        short: bool = False, cast: Sequence[str] = (),
        instructions: str = "") -> tuple[str, StageCall]:
    """Write the scene's prose from the writer's prompt (held to PROSE_GRAMMAR on a model
    that takes one, ended at STOP), without scaffolding (`title` restated at the top goes
    too) or paragraphs copied from the prompt. Cut off by the token limit, it is
    continued (within the window, `room`) while under `min_words`, then trimmed to a
    sentence (`short`: continued while under `min_words` however it stopped, for a model
    that ends scenes early). When scaffolding and copies were most of it, or copies left it under
    `min_words`, it is asked for once more, told not to copy, and the answer with more
    new words is kept; one that is still mostly scaffolding or copies is a
    ModelResponseError (the tick fails; nothing is committed). On a `short` model, one
    that names none of `cast` (the POV and the planned characters) is asked for once
    more, told so, and the second kept if it names them. Over `max_words` it is cut at a
    sentence within them (`call.warning` says what was done). A sentence that says one
    of the writer's `instructions` (its prompt's own words: Built.instructions) or of the
    asks above (CONTINUE, ANEW, STRAYED) again is taken out (text.cleanup.drop_instructions)."""
    prompt = "\n".join([*(m["content"] for m in messages if m["role"] != "assistant"), earlier])
    asked = "\n".join((instructions, CONTINUE, ANEW, STRAYED))
    _, call = ask_text(model, "writer", messages, max_tokens, grammar=PROSE_GRAMMAR, stop=STOP,
                       max_words=max_words)
    answer = _continue(model, messages, call, call.completions[-1].text, max_tokens, min_words,
                       room, short)
    draft = _draft(answer, call.completions[-1], len(call.completions), prompt, title, asked)
    copies = draft.mostly_junk() or (draft.copied and len(draft.text.split()) < max(min_words, 1))
    strayed = not copies and short and strays(draft.text, cast)
    if copies or strayed:
        first = len(call.completions)
        people = ", ".join(dict.fromkeys(name.strip() for name in cast if name.strip()))
        more = _anew(model, messages, call, max_tokens, min_words, room, max_words, short,
                     ANEW if copies else STRAYED.format(cast=people))
        if more is not None:
            fresh = _draft(more, call.completions[-1], len(call.completions) - first, prompt,
                           title, asked)
            if copies:
                call.warn("the writer copied its prompt (earlier scenes or its notes): asked "
                          "once more not to")
                draft = fresh if len(fresh.text.split()) > len(draft.text.split()) else draft
            else:
                kept = not fresh.mostly_junk() and not strays(fresh.text, cast)
                call.warn(f"the writer's scene named none of its people ({people}): asked "
                          "once more for the planned scene"
                          + ("" if kept else "; the second did not name them either, and "
                             "the first stands"))
                draft = fresh if kept else draft
    if draft.mostly_junk():
        raise ModelResponseError(
            f"writer: the answer is mostly scaffolding or copies of its prompt ({draft.dropped} "
            f"of {draft.dropped + len(draft.text.split())} words), twice; nothing is committed",
            stage="writer", raw=answer)
    if draft.copied:
        call.warn(f"{draft.copied} passage{'s' if draft.copied > 1 else ''} copied from "
                    "the prompt or an earlier scene taken out")
    if draft.told:
        call.warn(f"{len(draft.told)} sentence{'s' if len(draft.told) > 1 else ''} saying the "
                  f"writer's instructions again taken out: {draft.told[0][:80]!r}")
    if draft.unglued:
        call.warn(f"words run together split again: {', '.join(draft.unglued[:4])}"
                  + (f" and {len(draft.unglued) - 4} more" if len(draft.unglued) > 4 else ""))
    prose = draft.text
    stopped = call.completions[-1].finish_reason == WORDS
    if draft.cut_off:
        prose = trim_to_sentence(prose)
        tries = draft.calls
        after = f" after {tries - 1} continuation{'s' if tries > 2 else ''}" if tries > 1 else ""
        call.warn(f"the writer's answer was cut off at the {max_tokens}-token limit{after}: "
                    "trimmed to its last complete sentence (the limit follows "
                    "generation.scene_max_words, or set llm.writer_max_tokens)")
    elif prose and not _ENDS_SENTENCE.search(prose.rstrip()) and not stopped:
        try:                  # stopped, not cut off, in mid-sentence ("When he spoke again,")
            prose = trim_to_sentence(prose)
            call.warn("the writer's answer stopped in mid-sentence: trimmed to its last "
                        "complete sentence")
        except ModelResponseError:
            pass              # no sentence ends at all: kept as written
    words = len(prose.split())
    cut = cut_to_sentence(prose, max_words) if max_words and words > max_words else None
    if cut is not None and not cut.mid_sentence:
        prose = cut.text
        call.warn(f"the writer went on past generation.scene_max_words ({max_words}): "
                  "stopped there and cut at its last sentence within them" if stopped else
                  f"the scene had {words} words: cut at its last sentence within "
                  f"generation.scene_max_words ({max_words})")
    elif stopped and prose and not _ENDS_SENTENCE.search(prose.rstrip()):
        try:                  # copies taken out left it under max_words, in mid-sentence
            prose = trim_to_sentence(prose)
        except ModelResponseError:
            pass
    return prose, call


# -- the stage ---------------------------------------------------------------------


def prompt_for(ctx: TickContext, d: TickDraft, budget: Budget | None = None) -> Built:
    """The writer's prompt for the draft (`budget`: a smaller one than the stage's, to
    leave room for what a revision adds to it)."""
    tree, count = d.start.tree, ctx.session.counter_of("writer").count
    avoid = prose_step.avoid_line(prose_step.used_up(d.start.phrases,
                                                     ctx.config.style.max_phrase_uses))

    def tier3(room: int, upto: int | None) -> list[Piece]:
        return [Piece(doc.name, doc.block()) for doc in
                select_tier3(tree, room, count, upto=upto, stretch=TIER3_STRETCH * room)]

    return build_writer(ctx.session, story=d.story, memory=d.memory, plan=d.planned,
                        tick=d.tick, scenes=d.scenes, tool_results=d.tool_results,
                        steer=d.start.steer, tier3=tier3,
                        tier3_ends=[c.last for c in tree.checkpoints()], lore=d.start.lore,
                        budget=budget, standing=d.standing, style=d.start.style, avoid=avoid)


def build(ctx: TickContext, d: TickDraft) -> TickDraft:
    """The draft with the writer's prompt built."""
    return d.with_built(prompt_for(ctx, d))


def scene(ctx: TickContext, d: TickDraft, messages: list[dict[str, str]], *,
          max_tokens: int, model: ChatModel | None = None) -> tuple[str, StageCall]:
    """The draft's scene asked of the writer from `messages` (see `run`): the one way a
    scene is asked, whatever asks it. A small model (`short`, the lean writer) is held to
    the scene's people and continued while short."""
    gen, plan = ctx.config.generation, d.planned
    return run(model or ctx.model(d), messages, max_tokens=max_tokens,
               min_words=gen.scene_min_words, max_words=gen.scene_max_words, title=plan.title,
               room=ctx.room("writer"), earlier="\n\n".join(mend.earlier(d)),
               short=ctx.session.lean_for("writer"), cast=[plan.pov, *plan.characters],
               instructions=d.built["writer"].instructions if "writer" in d.built else "")


def ask(ctx: TickContext, d: TickDraft) -> tuple[str, StageCall]:
    """The writer's scene for the draft's prompt."""
    built = d.built["writer"]
    return scene(ctx, d, built.messages, max_tokens=ctx.budget("writer").max_output,
                 model=ctx.model(d, built))


def apply(ctx: TickContext, d: TickDraft, prose: str, call: StageCall) -> TickDraft:
    """The draft with the scene, checked and mended where `style.rewrite` says (see the
    module's docstring); a scene under generation.scene_min_words is a notice."""
    d = checked(ctx, replace(d, prose=prose), call)
    least, words = ctx.config.generation.scene_min_words, word_count(d.prose)
    return d.told(f"scene {d.tick} has {words} words, under generation.scene_min_words "
                  f"({least})" if words < least else "")


def checked(ctx: TickContext, d: TickDraft, call: StageCall) -> TickDraft:
    """The scene's phrases and style checked (tick/prose_step.py); with faults, a notice.
    Where style.rewrite says: a scene told in the wrong person or tense is written once
    more, told what to mend, the better of the two kept (the second call's completions
    join the first's); then its stale sentences are mended (tick/stages/mend.py)."""
    config, style = ctx.config.style, d.start.style
    found = mend.checking(ctx, d, d.prose)
    d = replace(d, checked=found)
    said = prose_step.notice(d.tick, found, config, style)
    if not prose_step.rewrites(config, ctx.session.lean_for("writer")):
        return d.told(said)
    if found.wrong:
        d = _again(ctx, d, call, found, said)
    d = mend.sentences(ctx, d, call)
    if said and not found.wrong:
        d = d.told(said + (f": {d.mended} sentence(s) written again" if d.mended else ""))
    return d


def _again(ctx: TickContext, d: TickDraft, call: StageCall, found: prose_step.Checked,
           said: str) -> TickDraft:
    """The scene written once more, told what to mend; the better draft kept."""
    built = d.built["writer"]
    messages = built.messages
    again = [*messages[:-1], {"role": messages[-1]["role"], "content": messages[-1]["content"]
                              + "\n\n" + prose_step.mend(found, d.start.style)}]
    limit = min(ctx.budget("writer").max_output, ctx.room("writer")(again))
    if limit < MIN_CONTINUATION:
        return d.told(said)
    prose, more = scene(ctx, d, again, max_tokens=limit, model=ctx.model(d, built))
    call.completions += more.completions
    second = mend.checking(ctx, d, prose)
    kept = second.rank() < found.rank()
    if kept:
        d, call.warning = replace(d, prose=prose, checked=second), more.warning
    return replace(d, rewritten="second" if kept else "first").told(
        f"{said}: written again once (style.rewrite: {ctx.config.style.rewrite}); the "
        f"{'second' if kept else 'first'} draft is kept")


STAGE: Stage[str] = Stage("writer", build=build, ask=ask, apply=apply)
