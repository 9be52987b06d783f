"""A scripted book with planted contradictions and near-miss controls, for the audit.

`book(scenes)` plans `scenes` scenes: ordinary ones (a POV and a companion from a
cast of eight who travel to one of ten places, a fact, a stated clock that always
moves on, prose of random words so that nothing repeats) and, on a grid, episodes
of three scenes per rule kind: a setup, a scene with a planted contradiction and a
near-miss control (a character dead only in a dream, a character who travels, a
fact told to the POV in dialogue, ...). A passage or an opening is repeated from
three scenes back: the writer's prompt holds the last two in full, and the write
stage drops what it copied from its prompt. Loops are planted apart: opened and never
mentioned again (overdue 31 scenes later), or mentioned and resolved in time.

Each `Spec` gives the ScriptedModel's answers for its scene (`answers`), and
`Book.planted` / `Book.controls` the (tick, kind) pairs the audit should and
should not report. `script(model, specs)` queues them all.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from tests.support.scripted import ScriptedModel
from tests.support.story_factory import prose as filler

CAST = ("Mara Quill", "Tobin Keel", "Ilse Varga", "Corin Lisle", "Petra Holm", "Anselm Thorne",
        "Nell Brandt", "Oskar Fenn")
VICTIMS = ("Hedda Vale", "Jonah Reed", "Signe Dahl", "Bram Ostrow", "Wren Calloway",
           "Yusuf Amari")
PLACES = ("the north quay", "the bell tower", "the salt cellar", "the chapel ruins",
          "the ferry landing", "the old observatory", "the rope walk", "the customs house",
          "the boathouse", "the tide mill")
VARIANTS = {"Tobin Keel": "Tobin Keell", "Corin Lisle": "Corin Lisl", "Petra Holm": "Petra Hollm",
            "the bell tower": "the bel tower", "the customs house": "the custom house",
            "the old observatory": "the old obsevatory"}
# A newcomer the planner creates who shares a surname or a word with a known name, and is
# no variant of it (one who repeats a first name or is a letter off, a tick renames).
NEWCOMERS = {"Tobin Keel": "Tamsin Keel", "Corin Lisle": "Agnes Lisle",
             "Petra Holm": "Ruth Holm", "the bell tower": "the bell yard",
             "the customs house": "the customs quay", "the old observatory": "the old orchard"}
THINGS = ("brass key", "silver whistle", "map of the reef", "pocket watch", "green ledger",
          "sailor's knife")
SECRETS = (("ledger", "altar"), ("pistol", "cistern"), ("letters", "chimney"),
           ("compass", "hayloft"), ("locket", "jetty"), ("deed", "belfry"))
LOOP_WORDS = ("counterfeit warrant", "vanished lighthouse keeper", "poisoned cistern",
              "smuggled gunpowder", "forged testament", "missing pilot boat")
KEPT_LOOPS = ("stolen figurehead", "drowned choirboy", "burned lifeboat", "silent foghorn",
              "broken seal", "hidden orchard")
KINDS = ("dead_or_absent", "two_places", "no_travel", "lost_item", "nomenclature",
         "pov_knowledge", "clock", "loop_overdue", "repetition", "repeated_title")
TIMES = ("08:00", "12:00", "16:00", "20:00")


@dataclass
class Spec:
    """One scene: the plan, the prose's own sentences, and the extraction's fields."""

    tick: int
    pov: str
    others: list[str]
    place: str
    title: str = ""
    lines: list[str] = field(default_factory=list)     # sentences opening the prose
    paragraph: str = ""                                 # a paragraph put after them
    opening: str = ""                                   # the prose's first paragraph instead
    extra: dict[str, Any] = field(default_factory=dict)   # extraction fields, over the defaults
    travel: list[str] | None = None                     # None: everyone present travels
    clock: str | None = None                            # None: the book's clock for the tick
    tools: list[dict[str, str]] = field(default_factory=list)

    def answers(self) -> tuple[dict, str, dict]:
        """The planner's, the writer's and the extractor's answers."""
        title = self.title or f"Scene {self.tick} at {self.place.removeprefix('the ')}"
        plan = {"title": title, "intention": f"{self.pov} goes to {self.place}.",
                "pov": self.pov, "location": self.place, "characters": [self.pov, *self.others],
                "tool_calls": self.tools}
        body = [" ".join(self.lines or [f"{self.pov} came to {self.place} with "
                                        f"{' and '.join(self.others) or 'no one'}."])]
        if self.opening:
            body.insert(0, self.opening)
        if self.paragraph:
            body.append(self.paragraph)
        body.append(filler(160, 7919 * self.tick))
        present = [self.pov, *self.others]
        extraction = {
            "summary": [f"{self.pov} is at {self.place}.", f"Scene {self.tick} goes on quietly.",
                        f"{self.pov} keeps watch until the tide turns."],
            "facts": [f"{self.pov} counted {self.tick} gulls at {self.place}"],
            "characters": [], "loops_opened": [], "loops_resolved": [], "relationships": [],
            "present": present,
            "travel": present if self.travel is None else self.travel,
            "clock": clock_at(self.tick) if self.clock is None else self.clock,
        }
        extraction.update(self.extra)
        return plan, "\n\n".join(body), extraction


def clock_at(tick: int) -> str:
    """The book's clock at `tick`: four scenes a day, always later."""
    return f"day {tick // 4 + 1}, {TIMES[tick % 4]}"


@dataclass
class Book:
    specs: list[Spec]
    planted: set[tuple[int, str]]
    controls: set[tuple[int, str]]


def _episode(kind: str, j: int, s: int, rng: random.Random, specs: dict[int, Spec]) -> tuple[int, int]:
    """Rewrite scenes s, s+1, s+2 for episode j of `kind`; (plant tick, control tick)."""
    setup, plant, control = specs[s], specs[s + 1], specs[s + 2]
    p, o = setup.pov, setup.others[0]
    plant.place = rng.choice([x for x in PLACES if x != setup.place])
    control.place = rng.choice([x for x in PLACES if x not in (setup.place, plant.place)])
    if kind == "dead_or_absent":
        v = VICTIMS[j]
        dead = j % 2 == 0
        setup.others = [v]
        setup.lines = [f"{v} {'drowned at the weir' if dead else 'sailed for the mainland'} "
                       f"while {p} watched."]
        setup.extra = {"status": [{"name": v, "status": "dead" if dead else "absent",
                                   "how": "drowned at the weir" if dead else "sailed away"}]}
        plant.others = [v]
        plant.lines = [f"{v} laughed and poured the tea for {plant.pov}."]
        if dead:
            control.others = []
            control.lines = [f"{control.pov} dreamed of {v}, who laughed in the dream."]
            control.extra = {"recalled": [v], "present": [control.pov]}
        else:
            control.others = [v]
            control.lines = [f"{v} came back from the mainland and greeted {control.pov}."]
            control.extra = {"status": [{"name": v, "status": "alive", "how": "came back"}]}
    elif kind == "two_places":
        plant.pov = p
        plant.others = [o]
        if j % 2 == 0:      # the same moment as the setup, elsewhere
            plant.clock = setup.clock = clock_at(s)
            plant.travel = [o]
            plant.lines = [f"{p} stood at {plant.place} as the clock struck."]
            control.pov, control.others = p, [o]
            control.lines = [f"{p} hurried on to {control.place}."]
        else:               # two places within the scene
            elsewhere = next(x for x in PLACES if x != plant.place)
            plant.travel = [o]
            plant.lines = [f"{p} waited at {plant.place}, and {p} was at {elsewhere} all along."]
            plant.extra = {"where": [{"name": p, "place": elsewhere}]}
            control.pov = p
            control.lines = [f"{p} left {control.place} and walked to {elsewhere}."]
            control.extra = {"where": [{"name": p, "place": elsewhere}]}
    elif kind == "no_travel":         # (with no time stated, a move is no finding)
        plant.pov, plant.others = p, [o]
        plant.travel, plant.clock = [o], "ten minutes later"
        plant.lines = [f"Ten minutes later {p} sat at {plant.place} and read the letter."]
        control.pov = p
        if j % 2 == 0:
            control.lines = [f"{p} rode out to {control.place}."]
        else:
            control.travel = [x for x in [control.pov, *control.others] if x != p]
            control.lines = [f"Hours later {p} was at {control.place}."]
    elif kind == "lost_item":
        thing = THINGS[j]
        setup.lines = [f"{p} gave the {thing} to {o}."]
        setup.extra = {"items": [{"name": p, "item": thing, "event": "gives", "to": o}]}
        plant.pov = p
        plant.lines = [f"{p} took out the {thing} and turned it over."]
        plant.extra = {"items": [{"name": p, "item": thing, "event": "uses"}]}
        if j % 2 == 0:
            control.pov = o
            control.lines = [f"{o} took out the {thing} and turned it over."]
            control.extra = {"items": [{"name": o, "item": thing, "event": "uses"}]}
        else:
            control.pov = p
            control.lines = [f"{p} took the {thing} back from {o} and used it at once."]
            control.extra = {"items": [{"name": p, "item": thing, "event": "gains"},
                                       {"name": p, "item": thing, "event": "uses"}]}
    elif kind == "nomenclature":
        known = list(VARIANTS)[j]
        variant, newcomer = VARIANTS[known], NEWCOMERS[known]
        if known.startswith("the "):
            # in the prose only: a planner's misspelt place is renamed before any is written
            away = next(c for c in CAST if c not in (plant.pov, *plant.others))
            plant.lines = [f"At dusk {plant.pov} saw a lamp lit in {variant}, where {away} "
                           "kept watch."]
            plant.extra = {"where": [{"name": away, "place": variant}]}
            control.place = newcomer
            control.tools = [{"tool": "create_location", "name": newcomer,
                              "detail": "a new place by the harbour"}]
            control.lines = [f"{control.pov} found {newcomer} for the first time."]
        else:
            plant.pov = next(c for c in CAST if c not in (known, o))
            plant.others = []          # the variant is the prose's, as the place's is
            plant.lines = [f"{variant} nodded to {plant.pov}."]
            plant.extra = {"present": [plant.pov, variant]}
            control.pov = plant.pov
            control.others = [newcomer]
            control.tools = [{"tool": "create_character", "name": newcomer,
                              "detail": "a cousin from the mainland"}]
            control.lines = [f"{newcomer}, a cousin from the mainland, nodded to {plant.pov}."]
    elif kind == "pov_knowledge":
        thing, where = SECRETS[j]
        fact = f"{p} hid the {thing} under the {where}"
        setup.lines = [f"While {o} kept watch, {p} pushed the {thing} out of sight beneath "
                       f"the {where}."]      # the fact is not the prose's sentence copied
        setup.extra = {"facts": [fact]}
        outsiders = [c for c in CAST if c not in (p, o)]
        plant.pov, plant.others = outsiders[0], [outsiders[1]]
        plant.lines = [f"{plant.pov} knew the {thing} lay under the {where}."]
        plant.extra = {"knows": [{"name": plant.pov, "fact": f"the {thing} is under the {where}"}]}
        if j % 2 == 0:
            control.pov, control.others = outsiders[2], [o]
            control.lines = [f"\"It is under the {where},\" {o} told {outsiders[2]}, "
                             f"\"the {thing}.\""]
            control.extra = {"told": [{"to": outsiders[2], "fact": fact}],
                             "knows": [{"name": outsiders[2],
                                        "fact": f"the {thing} is under the {where}"}]}
        else:
            control.pov, control.others = o, [outsiders[3]]
            control.lines = [f"{o} knew the {thing} lay under the {where}."]
            control.extra = {"knows": [{"name": o, "fact": f"the {thing} is under the {where}"}]}
    elif kind == "clock":
        day = s // 4 + 1
        plant.clock = f"day {day - 1}, 09:00"
        plant.lines = [f"It was nine in the morning of day {day - 1} when {plant.pov} woke."]
        hour = int(TIMES[(s + 2) % 4][:2])
        control.clock = clock_at(s + 2) if j % 2 == 0 else \
            f"{hour % 12 or 12}{'pm' if hour >= 12 else 'am'} on day {(s + 2) // 4 + 1}"
        control.lines = [f"The clock said {control.clock} when {control.pov} woke."]
    elif kind == "repetition":
        words = filler(70, 104_729 * (j + 1)).replace("\n\n", " ")
        specs[s - 2].paragraph = words    # three scenes back: the writer's prompt has only its summary
        tweaked = words.split()
        tweaked[len(tweaked) // 2] = "lantern"
        plant.paragraph = " ".join(tweaked)
        first = words.split(". ")[0]
        control.paragraph = first + ". " + filler(60, 15_485_863 * (j + 1)).replace("\n\n", " ")
    elif kind == "repeated_title":
        if j % 2 == 0:
            setup.title = plant.title = f"The {THINGS[j].title()} Again"
            control.title = f"The {THINGS[j].title()} Once More"
        else:
            opening = filler(16, 49_999 * (j + 1)).replace("\n\n", " ")
            specs[s - 2].opening = opening
            plant.opening = " ".join(opening.split()[:12]) + " " + filler(6, 31 * j + 1)
            control.opening = " ".join(opening.split()[:6]) + " " + filler(10, 7 * j + 3)
    return s + 1, s + 2


def book(scenes: int = 200, seed: int = 5) -> Book:
    """The scripted book: ordinary scenes, episodes on a grid, loops apart."""
    rng = random.Random(seed)
    specs = {}
    for tick in range(1, scenes + 1):
        pov, other = rng.sample(CAST, 2)
        specs[tick] = Spec(tick, pov, [other], rng.choice(PLACES))
    planted, controls = set(), set()
    episodes = [k for k in KINDS if k != "loop_overdue"]
    for j in range(6):
        for k, kind in enumerate(episodes):
            s = 6 + 32 * j + 3 * k
            if s + 2 > scenes:
                continue
            plant, control = _episode(kind, j, s, rng, specs)
            planted.add((plant, kind))
            controls.add((control, kind))
    for j, opened in enumerate((3, 20, 40, 60, 90, 120)):
        words = LOOP_WORDS[j]
        if opened + 31 <= scenes:
            specs[opened].extra.setdefault("loops_opened", [f"who is behind the {words}"])
            planted.add((opened + 31, "loop_overdue"))
        kept, words = opened + 2, KEPT_LOOPS[j]
        if kept + 31 <= scenes:
            specs[kept].extra.setdefault("loops_opened", [f"what the {words} hides"])
            mention = specs[kept + 20]
            mention.extra.setdefault("summary", [f"{mention.pov} asks about the {words}.",
                                                 f"Nobody answers about the {words}.",
                                                 "The night goes on."])
            specs[kept + 28].extra.setdefault("loops_resolved", [f"what the {words} hides"])
            controls.add((kept + 31, "loop_overdue"))
    return Book([specs[t] for t in range(1, scenes + 1)], planted, controls)


def script(model: ScriptedModel, specs: list[Spec]) -> ScriptedModel:
    """Queue every scene's planner, writer and extractor answers."""
    for spec in specs:
        plan, prose, extraction = spec.answers()
        model.add("planner", plan).add("writer", prose).add("extractor", extraction)
    return model


class BookModel:
    """A scripted model that answers each stage from the spec of the tick it works for
    (the request's context says which), so a stage asked twice (a repair, a
    writer asked once more) gets its scene's answer again; other stages (the
    summarizer) go to `otherwise`."""

    def __init__(self, specs: list[Spec], otherwise: Any):
        self.answers = {s.tick: s.answers() for s in specs}
        self.otherwise = otherwise
        self.scripted = ScriptedModel()

    def describe(self) -> str:
        return "scripted book"

    def complete(self, request: Any) -> Any:
        stages = ("planner", "writer", "extractor")
        if request.stage not in stages:
            return self.otherwise.complete(request)
        self.scripted.add(request.stage,
                          self.answers[request.view.tick][stages.index(request.stage)])
        return self.scripted.complete(request)


def score(found: set[tuple[int, str]], planted: set[tuple[int, str]]) -> dict[str, tuple]:
    """Per kind: (true positives, false positives, false negatives, precision, recall)."""
    out = {}
    for kind in KINDS:
        f = {x for x in found if x[1] == kind}
        p = {x for x in planted if x[1] == kind}
        tp, fp, fn = len(f & p), len(f - p), len(p - f)
        out[kind] = (tp, fp, fn, tp / (tp + fp) if tp + fp else 1.0, tp / (tp + fn) if tp + fn else 1.0)
    return out
