"""Stage 1, plan: the planner decides the scene and asks for tools.

`STAGE` is the tick's planner (tick/registry.py): its prompt built from the draft
(the book's names read first: tick/book_names.py), the plan asked for, then settled
(the beat, the final act's loops, its own words, a place for its location, names for
its POV and cast, the dead
and the absent, a fresh title, newcomers a reader would confuse) and its tools run
on memory. The functions above it are the settling's, pure."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace

from novel_agent.context.presence import gone, status_text
from novel_agent.context.tier3 import planner_overall
from novel_agent.models.ask import Room, StageCall, ask_json
from novel_agent.models.base import ChatModel
from novel_agent.story.decisions import Plan, plan_from_json, plan_schema
from novel_agent.story.memory.records import Character
from novel_agent.story.memory.store import cast_text, find_person, variant_lines
from novel_agent.text.cleanup import copied_sentences, sentences
from novel_agent.text.names import name_head
from novel_agent.text.places import not_a_place, place_name
from novel_agent.tick import book_names, payoff_step
from novel_agent.tick.draft import TickContext, TickDraft
from novel_agent.tick.registry import Stage
from novel_agent.tick.scene_memory import name_check, person_check, plan_step
from novel_agent.tick.stage_prompts import build_planner
from novel_agent.tick.stages.tools import REJECTED, plan_names


def run(model: ChatModel, messages: list[dict[str, str]], *, max_tokens: int,
        max_tools: int, room: Room | None = None, lean: bool = False,
        beats: Sequence[str] = ()) -> tuple[Plan, StageCall]:
    """Plan the next scene from the planner's prompt (`room`: see ask_json; `lean`: held
    to the lean schema, decisions.plan_schema; `beats`: the outline's beats it may name,
    the current one first)."""
    return ask_json(model, "planner", messages, max_tokens, plan_schema(max_tools, lean, beats),
                    lambda data: plan_from_json(data, max_tools=max_tools, beat=bool(beats)),
                    room)


def settle_beat(plan: Plan, beats: Sequence[str]) -> tuple[Plan, str]:
    """A plan that names one of the `beats` it was offered (the current beat first, then
    the next): an answer naming none or another is corrected to the current one.
    Returns (plan, a warning or ""); without `beats` (no outline, or no beat left in
    the chapter), the plan names none."""
    if not beats:
        return (replace(plan, beat=""), "") if plan.beat else (plan, "")
    if plan.beat in beats:
        return plan, ""
    said = f"named beat {plan.beat[:20]!r}" if plan.beat else "named no beat"
    return (replace(plan, beat=beats[0]),
            f"the plan {said}, not the current beat {beats[0]}"
            + (f" or the next, {beats[1]}" if len(beats) > 1 else "")
            + f": it advances {beats[0]}")


def own_words(plan: Plan, instructions: str) -> tuple[Plan, str]:
    """A plan whose intention keeps no sentence copied from the planner's `instructions`
    (a 1.5B planning scene 1 wrote "The premise tells it (who finds what, and where), and
    its intention says so" into its intention, and so into the writer's prompt). An
    intention that is all copy stays as it is. Returns (plan, a warning or "")."""
    said = sentences(plan.intention)
    copies = copied_sentences(said, instructions)
    own = [s for s in said if s not in copies]
    if not copies or not own:
        return plan, ""
    return (replace(plan, intention=" ".join(own)),
            f"the plan's intention copied its instructions; dropped: {copies[0][:80]!r}"
            + (f" and {len(copies) - 1} more" if len(copies) > 1 else ""))


def settle_location(plan: Plan, fallback: str) -> tuple[Plan, str]:
    """A plan whose location is a place's name (text/places.py): the prompt's words the
    planner copied with it taken off ("Inside the mountain glassworks in scene 6 in
    scene 7", from a character's "last at …" line, is the mountain glassworks); one that
    is still a phrase of the prompt is replaced by `fallback` (the last scene's place)
    when there is one. Returns (plan, a warning or "")."""
    place = place_name(plan.location)
    why = not_a_place(place)
    if why and fallback and not not_a_place(place_name(fallback)):
        return (replace(plan, location=place_name(fallback)),
                f"the planner's location {plan.location[:60]!r} is {why}: the scene stays at "
                f"{place_name(fallback)}")
    if why or place == plan.location:
        return plan, ""
    return replace(plan, location=place), ""


def name_heads(plan: Plan, check: Callable[[str], str | None]) -> Plan:
    """The plan with each POV, location and character that is a description starting with
    a name ("Skerry Light, a lighthouse on a rock island, 1911") cut to that name."""
    return replace(plan, pov=name_head(plan.pov, check),
                   location=name_head(plan.location, check),
                   characters=[name_head(c, check) for c in plan.characters])


def settle_pov(plan: Plan, check: Callable[[str], str | None],
               fallbacks: Sequence[str]) -> tuple[Plan, str]:
    """A plan whose POV is a name: if the planner's is not one (a small model may answer
    a sentence or the premise), the first plausible fallback (the last scene's POV, the
    protagonist) takes its place. Returns (plan, a warning or "")."""
    why = check(plan.pov)
    if not why:
        return plan, ""
    for name in fallbacks:
        if name and not check(name):
            cast = [name] + [c for c in plan.characters if c != plan.pov and c != name]
            return (replace(plan, pov=name, characters=cast),
                    f"the planner's POV {plan.pov[:60]!r} is not a name ({why}); {name} "
                    "tells the scene instead")
    return plan, f"the planner's POV {plan.pov[:60]!r} is not a name ({why})"


def among_the_living(plan: Plan, find: Callable[[str], Character | None],
                     fallbacks: Sequence[str]) -> tuple[Plan, list[str]]:
    """A plan that no dead or absent character tells and no dead one is present in, as
    memory has them (`find`: the character a name names): the first living one of the
    `fallbacks` (the last scene's POV, the protagonist), then of the plan's characters,
    tells the scene instead of a dead or absent POV, and the dead are taken out of its
    characters. Returns (plan, a warning for each change)."""
    warnings = []
    teller = find(plan.pov) if plan.pov else None
    if teller is not None and gone(teller):
        said = f"the planner's POV {teller['name']} is {status_text(teller, how=False)}"
        other = next((c for c in map(find, [*fallbacks, *plan.characters])
                      if c is not None and c is not teller and not gone(c)), None)
        if other is None:
            warnings.append(f"{said}, and no one living can tell the scene instead")
        else:
            warnings.append(f"{said}; {other['name']} tells the scene instead")
            plan = replace(plan, pov=str(other["name"]), characters=[str(other["name"]), *(
                n for n in plan.characters if find(n) is not other)])
    cast = []
    for name in plan.characters:
        who = find(name)
        if who is None or gone(who) != "dead" or who is find(plan.pov):
            cast.append(name)
        elif who is not teller:         # (a dead POV replaced: said above)
            warnings.append(f"{who['name']} is {status_text(who, how=False)}: left out of "
                            "the scene's characters")
    return replace(plan, characters=cast), list(dict.fromkeys(warnings))


_NAMED = re.compile(r"\b[A-Z][\w'’-]+(?:\s+[A-Z][\w'’-]+)*")


def remembered_only(plan: Plan, find: Callable[[str], Character | None]) -> tuple[Plan, list[str]]:
    """A plan whose intention names a dead character (as memory has them, `find`) says so
    after it, so that the writer, who reads the intention, does not make them act or
    speak: "Tobin walks the quay at dawn. (Tobin Keel is dead since scene 1: only
    remembered in this scene.)". Returns (plan, a warning for each)."""
    dead: list[Character] = []
    for found in _NAMED.finditer(plan.intention):
        who = find(found.group())
        if who is not None and gone(who) == "dead" and all(who is not d for d in dead):
            dead.append(who)
    if not dead:
        return plan, []
    notes = " ".join(f"({who['name']} is {status_text(who, how=False)}: only remembered in "
                     "this scene.)" for who in dead)
    return (replace(plan, intention=f"{plan.intention.rstrip()} {notes}"),
            [f"the planner's intention names {who['name']}, who is "
             f"{status_text(who, how=False)}: the writer is told they are only remembered"
             for who in dead])


def premise_epithets(plan: Plan, premise: str, protagonist: str = "") -> Plan:
    """The plan with each POV or character that is the premise's own epithet in lower case
    ("the drowned stranger", of "…finds a drowned stranger carrying a map…") named by it
    with capitals ("The Drowned Stranger"), so the premise's unnamed people are kept in
    memory and in the cast; one the protagonist's line gives ("Edda Lorn, the keeper")
    is the protagonist. Any other common noun ("strangers") is left to be rejected."""
    hero, _, about = protagonist.partition(",")
    told, theirs = _words(premise), _words(about)

    def epithet(name: str) -> str:
        bare = [w for w in _words(name).split() if w not in ("the", "a", "an")]
        phrase = f" {' '.join(bare)} "
        if not name or name != name.lower() or not 0 < len(bare) <= 3:
            return name
        if phrase in theirs and hero.strip():
            return hero.strip()
        return "The " + " ".join(w.capitalize() for w in bare) if phrase in told else name

    return replace(plan, pov=epithet(plan.pov), characters=[epithet(c) for c in plan.characters])


def _words(text: str) -> str:
    """`text`'s words in lower case, one space between and around them."""
    return " " + " ".join(re.findall(r"[a-z']+", text.lower())) + " "


def canonical_names(plan: Plan, find: Callable[[str], Character | None]) -> Plan:
    """The plan with its POV and characters as memory names them (`find`: the character a
    name or alias names), each once: "Edda" is Edda Lorn, and a scene lists her once. A
    character memory does not know (a name the tools rejected: "stranger") is left out."""
    def full(name: str) -> str:
        found = find(name) if name else None
        return str(found.get("name") or name) if found else ""
    pov = full(plan.pov) or plan.pov
    cast = list(dict.fromkeys(n for n in (full(c) for c in plan.characters if c) if n))
    return replace(plan, pov=pov, characters=cast)


_PHRASE = re.compile(r"\b(?:the|a|an|her|his|their|its)\s+((?:[a-z]+\s+)?[a-z]+'s\s+[a-z]{3,}"
                     r"|[a-z]{3,}(?:\s+[a-z]{3,})?)", re.IGNORECASE)
_DULL = {"scene", "story", "moment", "way", "time", "point", "end", "first", "next", "same"}
# Words that join a phrase to the next ("the map and the chamber" gave 'The Map And'): a
# phrase ends before one.
_LINKS = {"and", "but", "nor", "yet", "for", "with", "from", "into", "onto", "that", "this",
          "than", "then", "who", "whom", "which", "while", "when", "where", "was", "were",
          "has", "had", "have", "are", "not", "she", "her", "him", "his", "they", "them"}


def distinct_title(plan: Plan, earlier: Sequence[str]) -> tuple[Plan, str]:
    """A plan whose title no earlier scene has: a small model repeats one ("The
    Lighthouse Keeper" twice). A repeat is replaced by a phrase of the intention ("the
    drowned man's map" gives "The Drowned Man's Map"), else numbered. Returns (plan, a
    warning or "")."""
    taken = {_bare(t) for t in earlier if t}
    if not plan.title or _bare(plan.title) not in taken:
        return plan, ""
    for match in _PHRASE.finditer(plan.intention):
        words = match.group(1).split()
        cut = next((i for i, w in enumerate(words) if w.lower() in _LINKS), len(words))
        phrase = " ".join(words[:cut])         # "map and" is the map
        if not phrase or words[cut - 1 if cut else 0].lower() in _DULL:
            continue
        title = "The " + " ".join(w[:1].upper() + w[1:] for w in phrase.split())
        if _bare(title) not in taken:
            break
    else:
        n = 2
        while _bare(f"{plan.title} {n}") in taken:
            n += 1
        title = f"{plan.title} {n}"
    return (replace(plan, title=title),
            f"the planner's title {plan.title!r} is an earlier scene's; this one is {title!r}")


def _bare(title: str) -> str:
    return " ".join(re.sub(r"[^\w\s']", " ", title.casefold()).split())


# -- the stage ---------------------------------------------------------------------

TITLES_SEEN = 30     # a scene's title differs from the titles of this many before it


def build(ctx: TickContext, d: TickDraft) -> TickDraft:
    """The draft with the book's names read and the planner's prompt built."""
    d = book_names.read_pool_for(ctx, d)
    tree = d.start.tree
    return d.with_built(build_planner(
        ctx.session, story=d.story, memory=d.memory, tick=d.tick, scenes=d.scenes,
        overall=planner_overall(tree, ctx.config), steer=d.start.steer, lore=d.start.lore,
        tree=tree, names=book_names.offer_for(d), standing=d.standing))


def beats_of(ctx: TickContext, d: TickDraft) -> tuple[str, ...]:
    """The outline's beats the plan may name (the current one first; none without one)."""
    lean = ctx.session.lean_for("planner")
    return tuple(d.standing.choices(ahead=not lean)) if d.standing else ()


def ask(ctx: TickContext, d: TickDraft) -> tuple[Plan, StageCall]:
    """The planner's plan for the draft's prompt."""
    budget, built = ctx.budget("planner"), d.built["planner"]
    return run(ctx.model(d, built), built.messages, max_tokens=budget.max_output,
               max_tools=ctx.config.generation.max_tools_per_tick,
               room=ctx.room("planner", budget), lean=ctx.session.lean_for("planner"),
               beats=beats_of(ctx, d))


def apply(ctx: TickContext, d: TickDraft, plan: Plan, call: StageCall) -> TickDraft:
    """The draft with the plan settled (see the module's docstring) and its tools run."""
    plan, said = settle_beat(plan, beats_of(ctx, d))
    d = d.told(said)
    plan, said = payoff_step.closed_plan(plan, d.standing)
    d = d.told(said)
    check, last = name_check(d.story), d.scenes(d.tick - 1)
    plan, warning = own_words(plan, d.built["planner"].instructions)
    d = d.warned(warning)
    plan, warning = settle_location(plan, last.location if last else "")
    d = d.warned(warning)
    plan = name_heads(premise_epithets(plan, d.story.premise, d.story.protagonist), check)
    fallbacks = [last.pov if last else "", d.story.protagonist.split(",")[0]]
    plan, warning = settle_pov(plan, person_check(d.memory, check), fallbacks)
    d = d.warned(warning)
    find = lambda name: find_person(d.memory, name)  # noqa: E731
    plan, gone_lines = among_the_living(plan, find, fallbacks)
    d = d.warned(*gone_lines)
    plan, gone_lines = remembered_only(plan, find)
    d = d.warned(*gone_lines)
    plan, warning = distinct_title(plan, [s.title for s in d.scenes.recent(d.tick - 1, TITLES_SEEN)])
    d = book_names.guard_plan(ctx, replace(d.warned(warning), plan=plan), check)
    named, limit = d.planned, ctx.config.generation.max_tools_per_tick
    d = d.told(*variant_lines(d.memory, plan_names(named, limit), cast_text(plan_names(named, limit))))
    lines = plan_step(d.memory, named, d.tick, limit, check)
    plan = canonical_names(named, find)
    cast_named = {"pov": named.pov, "characters": list(named.characters)} \
        if (named.pov, named.characters) != (plan.pov, plan.characters) else None
    return replace(d, plan=plan, cast_named=cast_named,
                   tool_results=tuple(line for line in lines if not line.startswith(REJECTED))
                   ).warned(*(line for line in lines if line.startswith(REJECTED)))


STAGE: Stage[Plan] = Stage("planner", build=build, ask=ask, apply=apply)
