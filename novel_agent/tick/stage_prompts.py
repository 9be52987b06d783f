"""Building each stage's prompt for a project: read what the engine needs, fit, report.

This is the edge between the project's files and the pure context engine
(`context/`): it loads only the scenes the tiers can use (so a build costs
the same at scene 10 and scene 10,000), the previous prompt of the same stage
(for the prefix-share figure), and renders through the project's templates.
Every stage's prompt, the summarizer's included, goes through `fit_prompt`:
fitted to the session's budget for the stage, reported, ready to log.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from novel_agent.config.budget import Budget
from novel_agent.context.book_brief import beat_section, standing_section
from novel_agent.context.briefing import Briefing, propose_briefing
from novel_agent.context.builders import extractor_briefing, planner_briefing
from novel_agent.context.engine import Proposal, fit
from novel_agent.context.items import Item
from novel_agent.context.prompts import render_stage
from novel_agent.context.relevance import settled_tick
from novel_agent.context.report import build_report, flatten
from novel_agent.context.sections import Context
from novel_agent.context.stable import growing_prefix, stable_prefix
from novel_agent.context.tier3 import select_tier3, tier3_budget, tier3_end
from novel_agent.context.voice import style_items, voice_items
from novel_agent.context.writer import (
    TIER3_STRETCH,
    Piece,
    WriterInputs,
    propose_writer,
    reach_limit,
)
from novel_agent.errors import ConfigError
from novel_agent.index.recall import (
    WriterRecall,
    lore_items,
    plan_loops,
    planner_facts,
    recall_probe,
    relevant_facts,
    settled_items,
    settled_loops,
    shared_first_names,
)
from novel_agent.story.decisions import LEAN_TOOLS, Plan
from novel_agent.story.lore import Lorebook
from novel_agent.story.memory.store import Memory
from novel_agent.story.outline.file import Beat
from novel_agent.story.outline.standing import BookStanding
from novel_agent.story.scenes import SceneReader, key_tick
from novel_agent.story.summaries import SummaryTree
from novel_agent.tick.prompt_log import previous_messages

if TYPE_CHECKING:
    from novel_agent.tick.session import Session


@dataclass
class Built:
    """A prompt ready to send, and its report."""

    stage: str
    messages: list[dict[str, str]]
    report: dict[str, Any]
    state: dict[str, Any]
    # The planner's and the writer's: what the template says whatever the story, the
    # prompt with no sections (the planner drops a sentence of its intention copied from
    # these words; the writer's prose, a sentence that says them again). The writer's is
    # without the story's words its template is given (the ending, the beat, the title).
    instructions: str = ""
    # Characters of the first user message that change only at a checkpoint, and those
    # the next tick's prompt begins with too (stable.py): where a provider's explicit
    # prompt cache puts its breakpoints (Request.stable_prefix, Request.growing_prefix).
    stable_prefix: int = 0
    growing_prefix: int = 0


def fit_prompt(session: Session, stage: str, tick: int, propose: Callable[[int], Proposal],
               *, compare: bool = True, budget: Budget | None = None) -> Built:
    """Fit `propose`'s drafts to the stage's budget (or `budget`) and report it. With
    `compare`, the report measures the prefix shared with the same stage's prompt at the
    previous tick."""
    budget = budget or session.budget(stage)
    render = lambda ctx: render_stage(ctx, session.project.templates_dir)  # noqa: E731
    counter = session.counter_of(stage)
    fitted = fit(propose, render, counter, budget.tokens,
                 session.config.context.compaction_thresholds)
    previous, warning = previous_messages(session.project, tick, stage) if compare else (None, "")
    report = build_report(fitted, budget, counter, tick=tick, previous=previous,
                          warnings=[warning] if warning else ())
    return Built(stage, fitted.messages, report, fitted.state,
                 _instructions(render, fitted.context) if stage == "planner" else
                 _instructions(render, _unsaid(fitted.context)) if stage == "writer" else "",
                 stable_prefix(fitted.context, render), growing_prefix(fitted.context, render))


def _instructions(render: Callable[[Context], list[dict[str, str]]], context: Context) -> str:
    """The words of a prompt that its template gives whatever the story: the prompt
    rendered without its sections ("" for a project's template that needs them)."""
    try:
        return "\n".join(m["content"] for m in render(replace(context, sections=())))
    except ConfigError:
        return ""


UNSAID = "\n—\n"      # a story's words in a template's instructions: a line of its own


def _unsaid(context: Context) -> Context:
    """`context` with each of its words of the story (a value that is text: the ending, the
    beat, the title) replaced by UNSAID, so that its instructions are the template's own
    ("resolving the premise: —", then "Close it; leave no question open.")."""
    return replace(context, values={k: UNSAID if isinstance(v, str) and v.strip() else v
                                    for k, v in context.values.items()})


SEEN_SCENES = 30    # how far back the planner's settled sections look for who was seen when


def settled_facts(session: Session, memory: Memory, history: Sequence[Any],
                  anchor: int) -> list[Item]:
    """The facts about who and what the last scenes up to the settled tick `anchor` are
    about (`history`: the scenes up to it), chosen as of that tick: they stay put until
    the next one, so a prompt cache reuses them (the planner's "What is known"; the
    writer's settled block is chosen in index/recall.py, as of where its tier 3 ends)."""
    index = session.index
    if index is None:
        return []
    count = session.config.generation.recent_scenes_count
    settled = history[len(history) - count:] if count else []
    ticks = {s.tick for s in settled}
    names = [n for s in settled for n in (s.pov, *s.characters)]
    places = [s.location for s in settled if s.location]
    loops = [l for l in memory.open_loops() if not ticks.isdisjoint(l.get("scenes") or ())]
    # Chosen once per settled tick (and again when its scenes or loops change, or files
    # are edited by hand: Session.sync_index forgets them): the search is the costly part
    # of a planner prompt, and what it finds must stay put until the next settled tick.
    key = ("settled_facts", anchor, tuple(names), tuple(places),
           tuple((str(l.get("id")), str(l.get("description"))) for l in loops),
           repr(session.config.context.relevance))
    facts: list[Item] = session.remembered(key, lambda: planner_facts(
        index, memory, tick=anchor + 1, names=names, places=places, loops=loops,
        steer="", weights=session.config.context.relevance))
    return facts


def build_planner(session: Session, *, story: Any, memory: Memory, tick: int,
                  scenes: SceneReader, overall: str = "", steer: str = "",
                  lore: Lorebook | None = None, tree: SummaryTree | None = None,
                  names: str = "", standing: BookStanding | None = None) -> Built:
    """The planner's prompt for `tick`: with the facts about who and what the scenes up to
    the settled tick are about (chosen as of that tick, so they stay put for the prompt
    cache, like the characters), and the lore the note, the last scene and its names fire.
    With `tree` (and generation.include_overall_summary on), the story so far is a cut
    through the summary tree up to a checkpoint, and the recent scenes run from there:
    each scene told once. `names`: the book's names it offers for newcomers. With `standing`
    (a book with an outline), where the book stands (context/book_brief.py), pinned, and
    the beats the plan may name; when the current beat is the outline's last, the
    template's `finale` is the arc's ending (the scene ends the book)."""
    gen = session.config.generation
    anchor, count = settled_tick(tick, gen.checkpoint_summary_interval), gen.recent_scenes_count
    recent = scenes.recent(tick - 1, count + tick - 1 - anchor)
    so_far: list[tuple[str, str]] | None = None
    shares = dict(session.config.context.planner_shares)
    if tree is not None and gen.include_overall_summary:
        end = tier3_end(tree, recent[0].tick if recent else tick)
        room = tier3_budget(session.config, session.stage("writer").limits)   # the writer's tier 3
        so_far = [(d.name, d.block()) for d in select_tier3(tree, room,
                                                              session.counter_of("planner").count,
                                                              upto=end,
                                                              stretch=TIER3_STRETCH * room)]
        recent = scenes.recent(tick - 1, min(tick - 1 - end, len(recent) + reach_limit(gen, 0)))
        overall = ""
        shares["overall"] = max(shares["overall"], room / max(1, session.budget("planner").tokens))
    history = scenes.recent(anchor, SEEN_SCENES)
    facts = settled_facts(session, memory, history, anchor)
    last = recent[-1] if recent else None
    fired = lore_items(lore, [steer, last.body if last else "",
                              *([last.pov, *last.characters, last.location] if last else [])]) \
        if lore is not None else []
    briefing = planner_briefing(story, memory, recent,
                                tick=tick, shares=shares,
                                overall_summary=overall, steer=steer,
                                max_tools=min(gen.max_tools_per_tick, LEAN_TOOLS)
                                if session.lean_for("planner") else gen.max_tools_per_tick,
                                overdue_after=gen.loop_overdue_after, focus_count=count,
                                anchor_tick=anchor, history=history, facts=facts, lore=fired,
                                story_so_far=so_far, remember=session.remembered,
                                names=names)
    if standing is not None:
        current = standing.position.beat
        briefing = briefing.with_section(standing_section(
            standing, session.counter_of("planner").count,
            session.budget("planner").tokens)).with_values(
            beats=list(standing.choices(ahead=not session.lean_for("planner"))),
            finale=standing.ending(current.id) if current is not None else "",
            finale_is_beat=current is not None and standing.ending(current.id).strip()
            == current.what.strip())
    return fit_briefing(session, briefing.with_values(lean=session.lean_for("planner")), tick)


def build_writer(session: Session, *, story: Any, memory: Memory, plan: Plan, tick: int,
                 scenes: SceneReader, tool_results: Sequence[str] = (), steer: str = "",
                 tier3: Sequence[Piece] | Callable[[int, int | None], Sequence[Piece]] = (),
                 tier3_ends: Sequence[int] | None = None, lore: Lorebook | None = None,
                 budget: Budget | None = None, standing: BookStanding | None = None,
                 style: Mapping[str, Any] | None = None, avoid: str = "") -> Built:
    """The writer's prompt for `tick`, its tiers continuing from the committed state, with
    the older scenes and facts retrieval brings back, the lore that fires, and the recall
    probe in its report. `budget`: a smaller one than the stage's (a request that adds to
    the prompt: the audit's revision). With `standing` (a book with an outline), the
    writer is told what the plan's beat must make happen, and when it is the outline's
    last, that the scene ends the book, as the arc's ending says. With `style` (the
    project's style.yaml), the book's style and its sample passage; `avoid`: the line of
    phrases this book has used too often (tick/prose_step.py)."""
    config = session.config
    budget = budget or session.budget("writer")
    gen = config.generation
    last = scenes(tick - 1)
    fired = lore_items(lore, [plan.title, plan.intention, steer, plan.pov, *plan.characters,
                              plan.location, last.body if last else ""]) if lore else []
    touched, shared = (plan_loops(plan, memory), shared_first_names(memory)) \
        if session.index is not None else ([], set())      # read once, for both below
    retrieval = (WriterRecall(session.index, plan, memory, steer, tick,
                              config.context.relevance, session.embedder, loops=touched,
                              shared=shared)
                 if session.index is not None else None)
    inputs = WriterInputs(story=story, memory=memory, plan=plan, last_tick=tick - 1,
                          scene=scenes, tick=tick, tool_results=tool_results, steer=steer,
                          tier3=tier3, tier3_ends=tier3_ends, lore=fired,
                          voices=voice_items(memory, plan), style=style_items(style),
                          avoid=avoid,
                          retrieved=retrieval or (),
                          settled=settled_of(session, memory),
                          state=session.project.state().get("writer_tiers") or {},
                          min_words=gen.scene_min_words, max_words=gen.scene_max_words,
                          ending=session.ending, **beat_of_plan(standing, plan))
    propose = propose_writer(inputs, session.counter_of("writer"), budget.tokens, config.context,
                             gen)
    built = fit_prompt(session, "writer", tick, propose, budget=budget)
    if retrieval is not None:
        built.report["warnings"] = [*built.report.get("warnings", []), *retrieval.warnings]
        full: list[str] = next((s["items"] for s in built.report["sections"]
                                if s["name"] == "recent_full"), [])
        probe = recall_probe(relevant_facts(retrieval.index, plan, memory, tick, loops=touched,
                                            shared=shared),
                             flatten(built.messages), [key_tick(k) for k in full])
        built.report["recall"] = probe.to_dict()
    return built


def beat_of_plan(standing: BookStanding | None, plan: Plan) -> dict[str, str]:
    """What the writer is told of the outline: the beat the plan names (its text) and,
    when it is the outline's last, the arc's ending (`finale`); nothing without one."""
    beat = standing.beat(plan.beat) if standing is not None else None
    if standing is None or beat is None:
        return {}
    return {"beat": beat.what, "finale": standing.ending(beat.id)}


def settled_of(session: Session, memory: Memory) -> Callable[[int, Sequence[Any]], list[Item]]:
    """The writer's settled block as a function of where tier 3 ends and the scenes just
    before it (none without an index). Chosen once for each place tier 3 ends (and again
    when the loops of its scenes change, or files are edited by hand: Session.sync_index
    forgets it): what the index holds up to there does not change as the book grows."""
    index = session.index
    if index is None:
        return lambda upto, window: []
    weights = session.config.context.relevance

    def settled(upto: int, window: Sequence[Any]) -> list[Item]:
        loops = settled_loops(memory, window, upto)
        key = ("settled_items", upto,
               tuple((s.tick, s.pov, tuple(s.characters), s.location) for s in window),
               tuple((tuple(l["scenes"]), repr(l["opened_in"])) for l in loops), repr(weights))
        items: list[Item] = session.remembered(
            key, lambda: settled_items(index, memory, window, upto, weights))
        return items

    return settled


def build_extractor(session: Session, *, story: Any, memory: Memory, plan: Plan, prose: str,
                    tick: int, beat: Beat | None = None, tension: bool = False,
                    voices: Sequence[str] = ()) -> Built:
    """The extractor's prompt: a very long scene is cut middle-out, never refused. In a book
    with an outline it asks the scene's tension (`tension`) and whether `beat`, the beat
    the plan named, happened; it asks the voice cards of `voices` (names)."""
    briefing = extractor_briefing(story, memory, plan, prose, tick=tick,
                                  shares=session.config.context.extractor_shares,
                                  knowledge=session.knowledge)
    if beat is not None:
        briefing = briefing.with_section(beat_section(beat)).with_values(beat=beat.id)
    if tension:
        briefing = briefing.with_values(tension=True)
    if voices:
        briefing = briefing.with_values(voices=list(voices))
    return fit_briefing(session, briefing, tick)


def fit_briefing(session: Session, briefing: Briefing, tick: int, *,
                 compare: bool = True) -> Built:
    """Fit a planner, extractor or summarizer briefing to its stage's budget."""
    budget = session.budget(briefing.stage).tokens
    return fit_prompt(session, briefing.stage, tick,
                      propose_briefing(briefing, session.counter_of(briefing.stage), budget),
                      compare=compare)


def build_summary(session: Session, briefing: Briefing, tick: int) -> Built:
    """A summarizer prompt (a checkpoint, an arc, the overall summary), fitted like the rest."""
    return fit_briefing(session, briefing, tick, compare=False)
