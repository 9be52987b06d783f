"""A stress model: the offline model as a cheap model behaves on a long run.

Each scene brings 2–4 new characters or places, opens a loop nearly every time
(the planner's tool and the extractor each open one) and never resolves one;
it states two facts that name who was there, where, and a rare word of the
scene. Someone in each paragraph says a line, in a way of speaking of their own (a tic
made from their name), and the extractor gives each speaker it is asked for a voice
card, so the writer's "How they speak" and the audit's voice rule run all the way.
Now and then the plan comes back to an older loop, by its words, as
a real planner would. In a book with an outline it ignores the outline as it
ignores the loops: its plan names no beat, and its extractor says the beat did
not happen (or only partly) with a tension drawn at random, so the book ends only
by the outline's stretch rule (story/outline/position.py). Used in-process by the suite's long-run test
(`make_model=lambda: StressModel()`) and behind the test
server by bench/server_run.py --stress and bench/long_run.py.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from typing import Any

from novel_agent.models.base import Request
from novel_agent.models.offline import OBJECTS, VERBS, OfflineModel, _asked, _join

SYLLABLES = ["ka", "ve", "lor", "mi", "dan", "sul", "tir", "ob", "en", "ra", "quen", "is",
             "mel", "dor", "fen", "ash", "gri", "hal", "nor", "pel", "ost", "ur", "yn", "zed",
             "bri", "cal", "dru", "eth", "gol", "hes", "iv", "jun", "kor", "lam", "mor", "nev"]
PLACE_KINDS = ["wharf", "chapel", "mill", "archive", "bridge", "yard", "tower", "market",
               "orchard", "cistern", "kiln", "ferry", "garden", "vault", "quay", "stable"]
THINGS = ["ledger", "seal", "locket", "chart", "verdict", "debt", "oath", "ring", "cipher",
          "bell", "lamp", "will", "deed", "mask", "knife", "letter"]


TICS = ["Mark me", "Well now", "Listen here", "Mind you", "Hear this", "Look sharp", "Say it plain",
        "By my oath", "Steady on", "Of course", "Trust me", "No fear", "Heaven help us", "See here"]
SPOKE = re.compile(r"([A-Z][^.,\"]*?) spoke of ([^,]+), and [^.]+\.")


def tic_of(name: str) -> str:
    """A person's own way of starting a line: 'Mark me'."""
    return random.Random(f"tic|{name}").choice(TICS)


def coined(rng: random.Random, parts: int = 2) -> str:
    """A made-up word, capitalized: 'Velor', 'Ashtirmi'."""
    return "".join(rng.choice(SYLLABLES) for _ in range(parts)).capitalize()


class StressModel(OfflineModel):
    """Answers that keep adding people, places and open questions, and settle none."""

    def describe(self) -> str:
        return f"stress model (offline, seed {self.seed}): many names, loops never resolved"

    def _beat(self, request: Request) -> dict[str, str]:
        return {}                     # it names no beat: the tick gives it the current one

    def _pacing(self, request: Request, hints: Mapping[str, Any]) -> dict[str, Any]:
        rng = random.Random(f"pacing|{self.seed}|{hints.get('tick', 0)}")
        out = super()._pacing(request, hints)
        if "beat_status" in out:
            out["beat_status"] = rng.choice(["not", "not", "partly"])
        if "tension" in out:
            out["tension"] = rng.randint(1, 9)
        return out

    def _unique(self, rng: random.Random, taken: set[str], make: Any) -> str:
        for _ in range(200):
            name = make()
            if name.lower() not in taken:
                taken.add(name.lower())
                return name
        raise RuntimeError("no new name")

    def _plan(self, rng: random.Random, hints: Mapping[str, Any], request: Request) -> dict:
        memory = self._memory(hints)
        story = hints.get("story")
        max_tools = (request.json_schema or {}).get("properties", {}).get(
            "tool_calls", {}).get("maxItems", 3)
        taken = {str(c.get("name", "")).lower() for c in memory.characters.values()}
        taken |= {str(l.get("name", "")).lower() for l in memory.locations.values()}
        people = sorted(memory.characters.values(), key=lambda c: int(c.get("first_seen") or 0))
        protagonist = (getattr(story, "protagonist", "") or "Mara Quill").split(",")[0].strip()
        recent = [str(c.get("name")) for c in people[-12:]]
        pov = protagonist if not people or rng.random() < 0.5 else rng.choice(recent)
        new_count = rng.randint(2, 4)
        new_place = rng.random() < 0.5
        newcomers = [self._unique(rng, taken, lambda: f"{coined(rng)} {coined(rng, 3)}")
                     for _ in range(new_count - int(new_place))]
        places = [str(l.get("name")) for l in memory.locations.values()]
        if new_place or not places:
            location = self._unique(rng, taken, lambda: f"The {coined(rng)} {rng.choice(PLACE_KINDS)}")
        else:
            location = rng.choice(places[-8:] if rng.random() < 0.7 else places)
        known = [n for n in recent if n != pov]
        cast = [pov, *newcomers, *rng.sample(known, k=min(len(known), rng.randint(0, 2)))]
        thing = f"the {coined(rng)} {rng.choice(THINGS)}"
        question = f"who hid {thing} from {newcomers[0] if newcomers else pov} at {location}"
        calls = [{"tool": "open_loop", "name": "", "target": "", "detail": question}]
        calls += [{"tool": "create_character", "name": n, "target": "",
                   "detail": f"carries {rng.choice(OBJECTS)}"} for n in newcomers]
        goal = f"raise the question of {question}"
        older = memory.open_loops()
        if older and rng.random() < 0.3:
            back = rng.choice(older[-40:])
            goal += f", and press on {back.get('description')}"
        title = f"The {thing.split()[1]} at {location.split()[-1].capitalize()}"
        return {"title": title, "intention": f"{pov} meets {', '.join(cast[1:]) or 'no one'} "
                                             f"at {location} to {goal}.",
                "pov": pov, "location": location, "characters": cast,
                "tool_calls": calls[:max_tools]}

    def _prose(self, rng: random.Random, hints: Mapping[str, Any]) -> str:
        """The offline prose, where someone "spoke of" a thing now says it, with their tic
        (about as many tokens: the scene's size holds)."""
        cast = set(getattr(hints.get("plan"), "characters", []) or [])

        def said(match: re.Match[str]) -> str:
            who, what = match.group(1), match.group(2)
            return f'"{tic_of(who)}, {what}," said {who}.' if who in cast else match.group(0)
        return SPOKE.sub(said, super()._prose(rng, hints))

    def _voices(self, rng: random.Random, request: Request, hints: Mapping[str, Any]) -> dict:
        """A card for each of the scene's people who speaks in its prose, as many as the
        schema asks: their own tic, and a word they never say."""
        asked = _asked(request, "voices")
        if not asked:
            return {}
        plan = hints.get("plan")
        prose = str(hints.get("prose", ""))
        speakers = [n for n in getattr(plan, "characters", []) or [] if f"said {n}." in prose]
        return {"voices": [{"name": n, "diction": "plain, of the harbour",
                            "habits": "short answers, questions turned back",
                            "tics": [tic_of(n)], "never": [coined(random.Random(n), 2).lower()]}
                           for n in speakers[:int(asked.get("maxItems", 1))]]}

    def _extract(self, rng: random.Random, hints: Mapping[str, Any]) -> dict:
        answer = super()._extract(rng, hints)
        plan = hints.get("plan")
        cast = list(getattr(plan, "characters", []) or [])
        location = getattr(plan, "location", "") or ""
        if not cast or not location:
            return answer
        mark = coined(rng, 3).lower()
        answer["facts"] = [f"{rng.choice(cast)} has seen {rng.choice(OBJECTS)} at {location}",
                           f"{cast[-1]} keeps a {mark} token from {location}"]
        answer["characters"] = [{"name": n, "state": f"{rng.choice(VERBS)} at {location}"}
                                for n in cast[:4]]
        if rng.random() < 0.8:
            answer["loops_opened"] = [f"what the {mark} token of {cast[-1]} means"]
        answer["loops_resolved"] = []
        return answer

    def _summary(self, rng: random.Random, request: Request, hints: Mapping[str, Any]) -> str:
        """Bullets of a few names each, as a model writes them, up to about 200 words:
        what does not fit is left out (the faithfulness check then asks once more)."""
        items = [(str(k), str(label)) for k, label in hints.get("items") or []]
        if hints.get("kind") == "overall" or not items:
            return super()._summary(rng, request, hints)
        first, last = hints.get("first", ""), hints.get("last", "")
        people = [label for kind, label in items if kind == "character"]
        others = [label for kind, label in items if kind != "character"]
        bullets = [f"Scenes {first}–{last} follow {_join(people[:5])}." if people else
                   f"Scenes {first}–{last} move the story on."]
        bullets += [f"{_join(people[i:i + 5])} come into it." for i in range(5, len(people), 5)]
        bullets += [f"It turns on {label}." for label in others]
        out, words = [], 0
        for bullet in bullets:
            words += len(bullet.split())
            if words > 200:
                break
            out.append(f"- {bullet}")
        return "\n".join(out)


DEATHS = 0.5      # the share of a mortal stress model's scenes where one of the cast dies


class MortalStressModel(StressModel):
    """The stress model in a book where people die: in about half its scenes one of the
    cast (never the POV) dies, as its extractor says, and it says who was there, so
    memory records where each was last seen. The lines that tell who is dead and where
    each was seen then grow with the cast (issue 50, item 12); the prose is the stress
    model's, so a dead one may still be named in it."""

    def describe(self) -> str:
        return f"mortal stress model (offline, seed {self.seed}): many names, many deaths"

    def _extract(self, rng: random.Random, hints: Mapping[str, Any]) -> dict:
        answer = super()._extract(rng, hints)
        plan = hints.get("plan")
        cast = list(getattr(plan, "characters", []) or [])
        others = [n for n in cast if n != getattr(plan, "pov", "")]
        answer["present"] = cast
        if others and rng.random() < DEATHS:
            answer["status"] = [{"name": others[-1], "status": "dead",
                                 "how": "fell from the sea wall in the storm that night"}]
        return answer


_LAST_AT = re.compile(r"\blast at ([^;)\n]+)")


class CopyingStressModel(MortalStressModel):
    """The mortal stress model as a small model that copies its prompt back (issue 51,
    item 4): its planner sets most scenes "Inside" the place the longest "last at …" of
    its prompt names, words and all ("Inside the Velor kiln in scene 6"), and its
    extractor says the POV is at the scene's place "in scene N". Memory that stores
    what it is given says "last at the Velor kiln in scene 6 in scene 7" the tick after,
    one scene longer each tick: the character line that grew on the glassblowers' book."""

    def describe(self) -> str:
        return f"copying stress model (offline, seed {self.seed}): copies its prompt back"

    def _plan(self, rng: random.Random, hints: Mapping[str, Any], request: Request) -> dict:
        answer = super()._plan(rng, hints, request)
        seen = _LAST_AT.findall(request.messages[-1]["content"] if request.messages else "")
        if seen and rng.random() < 0.7:
            answer["location"] = "Inside " + max(seen, key=len).strip()
        return answer

    def _extract(self, rng: random.Random, hints: Mapping[str, Any]) -> dict:
        answer = super()._extract(rng, hints)
        plan = hints.get("plan")
        pov, location = getattr(plan, "pov", ""), getattr(plan, "location", "")
        if pov and location:
            answer["where"] = [{"name": pov, "place": f"{location} in scene {hints.get('tick')}"}]
        return answer
