"""The offline model: deterministic answers drawn from the story's own memory.

No LLM at all. Given the same seed and the same story it answers the same;
as the story grows its answers change with it (new characters, loops opened
and resolved, prose that names who is there). For tests, benchmarks of
thousands of ticks, and machines without the local model.

It is a provider like the others: what it draws on comes with each request, its
`view` (models/base.StoryView, read only: the story, the tick's memory, plan and
prose, for the summarizer the range and items to name, for the outline what each
call asks for), which the stage that asks puts on it. Its outline is
offline_outline.py's. It answers the names stage with the syllable generator's
names (text/syllables.py), as many as the request's schema asks. Without a view it
still answers validly, from the request alone; a stage it has no answer of its own
for gets a JSON object its request's schema allows (`from_schema`), or a sentence.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Mapping
from typing import Any

from novel_agent.models.base import Completion, Request, StoryView, Usage
from novel_agent.models.offline_outline import outline_answer
from novel_agent.text.nomenclature import name_book
from novel_agent.text.syllables import syllable_names

FIRST = ["Mara", "Tobin", "Ilse", "Corin", "Wren", "Anselm", "Petra", "Jory", "Lio", "Hedda",
         "Osric", "Nell", "Bram", "Sefa", "Ydris", "Calla"]
LAST = ["Quill", "Ashdown", "Varga", "Morrow", "Keel", "Thorne", "Lisle", "Brannock", "Oduya",
        "Fenn"]
PLACES = ["the harbour archive", "the salt market", "the old observatory", "the ferry landing",
          "the glasshouse", "the river stairs", "the lamplighters' guild", "the north road inn",
          "the flooded chapel", "the signal tower"]
OBJECTS = ["a sealed letter", "a brass key", "a torn map", "a ledger with missing pages",
           "a child's drawing", "a silver compass", "an unsigned contract", "a lantern"]
VERBS = ["hesitated", "listened", "counted the steps", "watched the door", "kept very still",
         "smiled without meaning it", "pocketed the evidence", "looked back once"]
WEATHER = ["Rain ticked against the shutters.", "Fog had come up from the water.",
           "The evening light was thin and gold.", "Wind worried at the loose slates.",
           "Somewhere a bell marked the hour.", "The air smelled of tar and cold iron."]
QUESTIONS = ["who sent {obj}", "why {name} lied about the night of the fire",
             "what lies beneath {place}", "who is paying {name}'s debts",
             "what {name} saw at {place}", "where {obj} came from"]


# The names stage's lists, the syllable generator's kind of each, and how many when the
# request's schema does not say (story/name_pool.py's SIZES).
NAME_LISTS = {"first_names": ("first", 24), "surnames": ("surname", 16), "places": ("place", 12)}


class _NoMemory:
    """What a request without a context draws on: a story with nothing in it yet."""

    characters: dict[str, Any] = {}
    locations: dict[str, Any] = {}

    def open_loops(self) -> list[dict[str, Any]]:
        return []

    def find_loop(self, ref: str) -> dict[str, Any] | None:
        return None


NO_MEMORY = _NoMemory()


class OfflineModel:
    """A deterministic stand-in for an LLM; it says plainly what it is."""

    def __init__(self, seed: int = 0):
        self.seed = seed
        self.calls = 0

    def describe(self) -> str:
        return (f"offline model (deterministic, seed {self.seed}): no LLM, placeholder prose "
                "drawn from the story's memory")

    def complete(self, request: Request) -> Completion:
        self.calls += 1
        hints = hints_of(request.view)
        rng = random.Random(self._seed_for(request, hints))
        stage = request.stage
        if stage == "planner":
            text = json.dumps(self._plan(rng, hints, request) | self._beat(request))
        elif stage == "writer":
            text = self._prose(rng, hints)
        elif stage == "extractor":
            text = json.dumps(self._extract(rng, hints) | self._pacing(request, hints)
                              | self._voices(rng, request, hints))
        elif stage == "auditor":        # it cannot judge prose: it finds nothing
            text = json.dumps({"findings": []})
        elif stage == "outline":
            text = json.dumps(outline_answer(self.seed, hints.get("story"),
                                             request.view.job if request.view else {}))
        elif stage == "names":          # the book's pool: made-up names, from its seed
            text = json.dumps(self._names(hints, request))
        elif stage == "summarizer":
            text = self._summary(rng, request, hints)
        elif request.json_schema is not None:     # a stage it knows nothing of
            text = json.dumps(from_schema(request.json_schema, rng))
        else:
            text = self._line(rng, request, hints)
        prompt_chars = sum(len(m.get("content", "")) for m in request.messages)
        usage = Usage(prompt_tokens=prompt_chars // 4, completion_tokens=len(text) // 4)
        return Completion(text=text, usage=usage, finish_reason="stop", model="offline",
                          response_format="json_schema" if request.json_schema else "")

    def _line(self, rng: random.Random, request: Request, hints: Mapping[str, Any]) -> str:
        """What it says to a stage it has no answer of its own for: a sentence of the
        scene (a mend's is its sentence said again), else of the weather."""
        asked = request.messages[-1].get("content", "") if request.messages else ""
        quoted = re.findall(r'"([^"\n]{12,})"', asked)
        return quoted[-1] if quoted else rng.choice(WEATHER)

    # -- the outline's keys (asked only in a book with an outline) ----------
    def _due(self, hints: Mapping[str, Any]) -> list[str]:
        """The loops due the plan left open, which the scene resolves (two at most)."""
        memory = self._memory(hints)
        still = (memory.find_loop(key) for key in hints.get("due") or [])
        open_now = memory.open_loops()
        return [str(loop["id"]) for loop in still if loop is not None and loop in open_now][:2]

    def _beat(self, request: Request) -> dict[str, str]:
        """The beat the plan advances: the current one, the first the schema offers."""
        offered = _asked(request, "beat").get("enum") or []
        return {"beat": str(offered[0])} if offered else {}

    def _pacing(self, request: Request, hints: Mapping[str, Any]) -> dict[str, Any]:
        """The planned beat done, and a tension within one of the target (by the tick)."""
        out: dict[str, Any] = {}
        if _asked(request, "beat_status"):
            out["beat_status"] = "done"
        if _asked(request, "tension"):
            target = int(hints.get("target_tension", 5))
            out["tension"] = min(10, max(0, target + int(hints.get("tick", 0)) % 3 - 1))
            out["tension_reason"] = "The scene turns on what its beat puts at stake."
        return out

    # -- helpers -----------------------------------------------------------
    def _seed_for(self, request: Request, hints: Mapping[str, Any]) -> int:
        story = hints.get("story")
        key = f"{self.seed}|{request.stage}|{hints.get('tick', 0)}|{getattr(story, 'name', '')}"
        if not hints:
            key += "|" + json.dumps(request.messages)[-2000:]
        return int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big")

    @staticmethod
    def _memory(hints: Mapping[str, Any]) -> Any:
        """The tick's memory (story/memory/store.py's Memory), read through its characters,
        locations, open_loops() and find_loop(); an empty one without a context."""
        memory = hints.get("memory")
        return memory if memory is not None else NO_MEMORY

    def _new_name(self, rng: random.Random, memory: Any) -> str:
        taken = {str(c.get("name", "")).lower() for c in memory.characters.values()}
        for _ in range(50):
            name = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
            if name.lower() not in taken:
                return name
        return f"{rng.choice(FIRST)} {rng.choice(LAST)} {rng.randint(2, 999)}"

    def _plan(self, rng: random.Random, hints: Mapping[str, Any], request: Request) -> dict[str, Any]:
        memory = self._memory(hints)
        story = hints.get("story")
        max_tools = (request.json_schema or {}).get("properties", {}).get(
            "tool_calls", {}).get("maxItems", 3)
        names = [str(c.get("name")) for c in memory.characters.values()]
        calls: list[dict[str, str]] = []
        protagonist = (getattr(story, "protagonist", "") or "").split(",")[0].strip()
        if not names:
            pov = protagonist[:60] if protagonist else self._new_name(rng, memory)
            calls.append({"tool": "create_character", "name": pov, "target": "",
                          "detail": "the protagonist, " + rng.choice(VERBS)})
        else:
            pov = rng.choice(names)
        cast = [pov]
        if len(names) < 4 or rng.random() < 0.2:
            newcomer = self._new_name(rng, memory)
            calls.append({"tool": "create_character", "name": newcomer, "target": "",
                          "detail": f"carries {rng.choice(OBJECTS)}"})
            cast.append(newcomer)
        others = [n for n in names if n != pov]
        if others:
            cast.append(rng.choice(others))
        places = [str(l.get("name")) for l in memory.locations.values()]
        if places and rng.random() < 0.7:
            location = rng.choice(places)
        else:
            location = rng.choice([p for p in PLACES if p not in places] or PLACES).capitalize()
            calls.append({"tool": "create_location", "name": location, "target": "",
                          "detail": rng.choice(WEATHER)})
        open_loops = memory.open_loops()
        due = [loop for loop in map(memory.find_loop, hints.get("due") or [])
               if loop is not None and loop in open_loops]
        if due or hints.get("no_new_loops"):     # a book with an outline: the loops due first
            loop = due[0] if due else next(iter(open_loops), None)
            if loop is not None:
                calls.append({"tool": "resolve_loop", "name": str(loop.get("id")), "target": "",
                              "detail": f"{pov} finds the answer"})
            goal = f"resolve the question of {loop.get('description')}" if loop is not None \
                else "face what the story has left"
        elif len(open_loops) > 2 and rng.random() < 0.5:
            loop = open_loops[0]
            calls.append({"tool": "resolve_loop", "name": str(loop.get("id")), "target": "",
                          "detail": f"{pov} finds the answer"})
            goal = f"resolve the question of {loop.get('description')}"
        else:
            question = rng.choice(QUESTIONS).format(obj=rng.choice(OBJECTS), name=cast[-1],
                                                    place=location)
            calls.append({"tool": "open_loop", "name": "", "target": "", "detail": question})
            goal = f"raise the question of {question}"
        if len(cast) > 1 and rng.random() < 0.6:
            calls.insert(len(calls) - 1, {"tool": "add_relationship", "name": cast[0], "target": cast[1],
                          "detail": rng.choice(["uneasy allies", "old friends", "rivals",
                                                "creditor and debtor", "siblings"])})
        title = f"{rng.choice(['The', 'A'])} {rng.choice(['Lantern', 'Ledger', 'Tide', 'Key', 'Map', 'Bell', 'Letter'])} at {location.split()[-1].capitalize()}"  # noqa: E501
        intention = f"{pov} meets {', '.join(cast[1:]) or 'no one'} at {location} to {goal}"
        asked = first_sentence(str(hints.get("steer") or ""))
        return {"title": title,
                "intention": intention + (f", as the author asks: {asked}" if asked else "."),
                "pov": pov, "location": location, "characters": cast,
                "tool_calls": calls[:max_tools]}

    def _prose(self, rng: random.Random, hints: Mapping[str, Any]) -> str:
        plan = hints.get("plan")
        pov = getattr(plan, "pov", "") or "Someone"
        location = getattr(plan, "location", "") or "the room"
        cast = [c for c in getattr(plan, "characters", []) if c != pov]
        intention = getattr(plan, "intention", "")
        lo, hi = int(hints.get("min_words", 200)), int(hints.get("max_words", 400))
        target = rng.randint(lo, max(lo, hi))
        paragraphs: list[str] = []
        words = 0
        while words < target:
            other = rng.choice(cast) if cast else "the silence"
            sentences = [rng.choice(WEATHER),
                         f"{pov} {rng.choice(VERBS)} at {location}.",
                         f"{other.capitalize() if other[0].islower() else other} spoke of "
                         f"{rng.choice(OBJECTS)}, and {pov} {rng.choice(VERBS)}.",
                         f"It was, {pov} thought, a matter of {rng.choice(['trust', 'debt', 'memory', 'timing', 'courage'])}."]  # noqa: E501
            if intention and not paragraphs:
                sentences.append(f"There was no avoiding it now. {intention}")
            rng.shuffle(sentences)
            paragraph = " ".join(sentences)
            paragraphs.append(paragraph)
            words += len(paragraph.split())
        return "\n\n".join(paragraphs)

    def _extract(self, rng: random.Random, hints: Mapping[str, Any]) -> dict[str, Any]:
        """Bullets and memory changes from the plan and the prose. A plan without a POV
        or a place is not one the prose was written from (an imported piece): the
        bullets are the prose's own first sentence and two more, the POV's state the
        first sentence naming them, and no fact is made up."""
        plan = hints.get("plan")
        pov, location = getattr(plan, "pov", "") or "", getattr(plan, "location", "") or ""
        prose = str(hints.get("prose", ""))
        sentences = [s.strip() + "." for s in prose.replace("\n", " ").split(".") if len(s.split()) > 4]
        answer: dict[str, Any] = {"facts": [], "characters": [], "loops_opened": [],
                                  "loops_resolved": [], "relationships": []}
        if not (pov and location):
            summary = [first_sentence(prose) or "The story moves on."]
            summary += [s for s in rng.sample(sentences, k=min(2, len(sentences)))
                        if s not in summary]
            naming = [s for s in sentences if pov and pov in s]
            if naming:
                answer["characters"] = [{"name": pov, "state": naming[0][:120]}]
            return {"summary": summary, **answer}
        cast = list(getattr(plan, "characters", []) or [pov])
        summary = [f"{pov} is at {location}.", getattr(plan, "intention", "") or "The story moves on."]
        summary += rng.sample(sentences, k=min(2, len(sentences)))
        answer["loops_resolved"] = self._due(hints)
        return {**answer, "summary": summary[:6],
                "facts": [f"{rng.choice(cast)} has seen {rng.choice(OBJECTS)} at {location}"],
                "characters": [{"name": pov, "state": f"{rng.choice(VERBS)} at {location}"}]}

    def _voices(self, rng: random.Random, request: Request, hints: Mapping[str, Any]) -> dict[str, Any]:
        """The voice cards the extractor's schema asks for (`voices`): none here, since
        this model's prose has no line of dialogue (the stress model's has)."""
        return {"voices": []} if _asked(request, "voices") else {}

    def _names(self, hints: Mapping[str, Any], request: Request) -> dict[str, list[str]]:
        """The book's pool of names: the syllable generator's, from the seed and the
        book's name, as many as the schema asks at most, none confusable with a name
        memory holds (the pool story/name_pool.fallback_pool makes)."""
        memory = self._memory(hints)
        known = name_book([str(c.get("name", "")) for c in memory.characters.values()],
                          [str(p.get("name", "")) for p in memory.locations.values()])
        seed = f"{self.seed}|{getattr(hints.get('story'), 'name', '')}"
        return {key: syllable_names(seed, int(_asked(request, key).get("maxItems") or size),
                                    kind, known)
                for key, (kind, size) in NAME_LISTS.items()}

    def _summary(self, rng: random.Random, request: Request, hints: Mapping[str, Any]) -> str:
        """Checkpoint and arc bullets that name every item the request lists (the
        characters, loops and facts of the range); the overall summary as a short
        paragraph that keeps its opening and its latest turns."""
        if hints.get("kind") == "overall":
            return self._overall(hints)
        items = [(str(k), str(label)) for k, label in hints.get("items") or []]
        if not items:
            lines = [line[2:] for m in request.messages
                     for line in m.get("content", "").splitlines() if line.startswith("- ")]
            picked = lines[:: max(1, len(lines) // 5)][:5] if lines else ["The story continues."]
            return "\n".join(f"- {line}" for line in picked)
        first, last = hints.get("first", ""), hints.get("last", hints.get("tick", ""))
        people = [label for kind, label in items if kind == "character"]
        loops = [label for kind, label in items if kind == "loop"]
        facts = [label for kind, label in items if kind == "fact"]
        bullets = [f"Scenes {first}–{last} follow {_join(people)}, "
                   f"who {rng.choice(VERBS)}." if people else
                   f"Scenes {first}–{last} move the story on."]
        bullets += [f"The question of {_join(part)} drives them." for part in _chunks(loops, 2)]
        bullets += [f"It is established that {'; '.join(part)}." for part in _chunks(facts, 2)]
        return "\n".join(f"- {b}" for b in bullets[:5])

    @staticmethod
    def _overall(hints: Mapping[str, Any]) -> str:
        previous = [s.strip() for s in str(hints.get("previous") or "").split(". ") if s.strip()]
        new = []
        for body in hints.get("new") or []:
            lines = [l[2:].strip() for l in str(body).splitlines() if l.startswith("- ")]
            if lines:
                new.append(lines[0].rstrip("."))
        sentences = previous[:1] + previous[1:][-3:] + new[-2:]
        text = ". ".join(s.rstrip(".") for s in sentences if s)
        return (text + ".") if text else "The story has begun."


def hints_of(view: StoryView | None) -> dict[str, Any]:
    """What a request's view tells the answers below, as plain values by name (a call's
    job, a summary's range or an outline level's values, among them); {} without one."""
    if view is None:
        return {}
    out: dict[str, Any] = {"story": view.story, "memory": view.memory, "tick": view.tick,
                           "plan": view.plan, "prose": view.prose,
                           "min_words": view.min_words, "max_words": view.max_words,
                           "steer": view.steer}
    if view.target_tension is not None:
        out["target_tension"] = view.target_tension
    if view.due:
        out["due"] = list(view.due)
    if view.no_new_loops:
        out["no_new_loops"] = True
    return out | dict(view.job)


def from_schema(schema: Mapping[str, Any], rng: random.Random) -> Any:
    """A value `schema` (a JSON schema's object, array, string, number, enum) allows: the
    first of an enum, the fewest items an array may hold, a short string."""
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type", "object")
    kind = next((k for k in kind if k != "null"), "string") if isinstance(kind, list) else kind
    if kind == "object":
        props = schema.get("properties") or {}
        return {key: from_schema(props[key], rng) for key in schema.get("required", props)}
    if kind == "array":
        return [from_schema(schema.get("items") or {}, rng)
                for _ in range(int(schema.get("minItems", 0)))]
    if kind in ("integer", "number"):
        return schema.get("minimum", 0)
    if kind == "boolean":
        return False
    return rng.choice(WEATHER)[: int(schema.get("maxLength", 200))]


def _asked(request: Request, key: str) -> dict[str, Any]:
    """The schema of `key` in the request's answer, {} when it is not asked for."""
    asked = (request.json_schema or {}).get("properties", {}).get(key)
    return asked if isinstance(asked, dict) else {}


def first_sentence(note: str, limit: int = 200) -> str:
    """The first sentence of an author's note (headings skipped), ending in punctuation."""
    lines = [l.strip() for l in note.splitlines() if l.strip() and not l.lstrip().startswith("#")]
    if not lines:
        return ""
    sentence = re.split(r"(?<=[.!?])\s", " ".join(lines), maxsplit=1)[0][:limit].strip()
    return sentence if sentence[-1:] in ".!?" else sentence + "."


def _join(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _chunks(items: list[str], parts: int) -> list[list[str]]:
    """`items` in at most `parts` consecutive groups of nearly equal size."""
    if not items:
        return []
    size = -(-len(items) // parts)
    return [items[i:i + size] for i in range(0, len(items), size)]
