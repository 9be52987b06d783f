"""The sentence mend: a scene's stale sentences written again, one request each.

After the writer (tick/stages/write.py), where `style.rewrite` says, each stale
sentence of the scene (prose_step.stale_sentences: a listed phrase over its
allowance, ECHO words in a row from one of the last COPY_SOURCES scenes) is asked of
the writer's model again on its own, as the stage "mend" (config/stages.py: it
borrows the writer's model and slot), and its answer spliced in where it will do
(prose_step.mended: not a sentence of the same sense is refused; a phrase's sentence is
asked once more when its first answer will not do); the scene is then checked again.
A failed call leaves the sentence. Each mend, before and after, is the draft's `mends`,
which the plan record keeps (`prose.mends`) and `novel scenes show --mends` prints.
"""

from __future__ import annotations

from dataclasses import replace

from novel_agent.errors import NovelError
from novel_agent.models.ask import StageCall
from novel_agent.models.base import Request
from novel_agent.tick import prose_step
from novel_agent.tick.draft import TickContext, TickDraft

STAGE = "mend"
COPY_SOURCES = 5      # the scenes before this one whose words a scene may not say again


def checking(ctx: TickContext, d: TickDraft, prose: str) -> prose_step.Checked:
    """What the prose check finds of `prose` as the draft's scene: its phrases over their
    allowance in the last scenes, and its distance from the book's style."""
    style = d.start.style
    return prose_step.check(prose, d.start.phrases, prose_step.phrases_of(style),
                            ctx.config.style.max_phrase_uses, style)


def earlier(d: TickDraft) -> list[str]:
    """The bodies of the COPY_SOURCES scenes before the draft's."""
    return [s.body for s in d.scenes.recent(d.tick - 1, COPY_SOURCES)]


def sentences(ctx: TickContext, d: TickDraft, call: StageCall) -> TickDraft:
    """The draft with its stale sentences mended (see the module's docstring), each
    completion noted in `call` (the writer's: its event counts them)."""
    phrases = prose_step.phrases_of(d.start.style)
    over = list(d.checked.over) if d.checked else []
    model, count = ctx.model(d), ctx.session.counter_of(STAGE).count
    done: list[tuple[prose_step.Stale, str]] = []
    for stale in prose_step.stale_sentences(d.prose, over, phrases, earlier(d)):
        size = count(stale.sentence)
        for _ in range(2 if stale.words in over else 1):    # a stock phrase: asked twice
            try:
                answer = model.complete(Request(stage=STAGE,
                                                messages=prose_step.mend_messages(stale),
                                                max_tokens=2 * size + 24))
            except NovelError:
                break
            call.note(answer)
            text = prose_step.mended(stale, answer.text, phrases)
            if text:
                done.append((stale, text))
                break
    if not done:
        return d
    prose = prose_step.splice(d.prose, done)
    return replace(d, prose=prose, mended=len(done), checked=checking(ctx, d, prose),
                   mends=tuple((stale.sentence, text) for stale, text in done))
