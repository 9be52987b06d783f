"""A reading model: the offline model with an extractor that reads the scene's own text.

Its writer writes the offline model's prose plus the events a test gives for the tick
(`events={15: ["Anselm Vey died at the weir."]}`), and its extractor answers from the
prose alone, as a careful model would, with the continuity audit's keys filled in:

    NAME died HOW.                    status dead (HOW)         NAME left for good.  absent
    NAME went to PLACE.               where, travel             It was [WEEKDAY, ]day N, TIME.  clock
    NAME picked up the THING.         items: gains              NAME lost the THING. loses
    NAME gave the THING to OTHER.     items: gives to OTHER
    NAME came in from the rain.       a new character (its state), present
    NAME was now STATE.               the character's state     NAME and OTHER became KIND.
    NAME wondered about the THING.    a loop: "Who left the THING behind?"
    NAME settled the THING.           that loop resolved
    Everyone knew of the THING.       a fact: "The THING is known to all in the town"
    NAME read it aloud to everyone by the fire.   a fact copied from the scene (never kept)

Everyone an event names is present; the summary is the prose's first sentences. What it
answers depends on the prose only (never on the plan or memory), so a scene written twice
is extracted twice alike, in-process or through the test server. Every fourth plan names
its POV by first name only (as a model does), so the tools learn an alias. Used in-process
(`make_model=lambda: ReadingModel(events=...)`) and behind the test
server (story_server.py, which reads the prose back from the prompt).
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from typing import Any

from novel_agent.models.base import Request
from novel_agent.models.offline import OfflineModel

NAME = r"([A-Z][a-z]+(?: [A-Z][a-z]+)*)"
THING = r"([a-z][a-z ]*[a-z])"
EVENTS: list[tuple[re.Pattern[str], str]] = [(re.compile(p), kind) for p, kind in [
    (rf"{NAME} died ([^.]+)\.", "died"),
    (rf"{NAME} left for good\.", "absent"),
    (rf"{NAME} went to ((?:the )?[A-Z][\w ]+)\.", "went"),
    (rf"{NAME} picked up the {THING}\.", "gains"),
    (rf"{NAME} lost the {THING}\.", "loses"),
    (rf"{NAME} gave the {THING} to {NAME}\.", "gives"),
    (rf"{NAME} came in from the rain\.", "came"),
    (rf"{NAME} was now ([^.]+)\.", "state"),
    (rf"{NAME} and {NAME} became ([a-z ]+)\.", "became"),
    (rf"{NAME} wondered about the {THING}\.", "wondered"),
    (rf"{NAME} settled the {THING}\.", "settled"),
    (rf"Everyone knew of the {THING}\.", "knew"),
    (rf"{NAME} read it aloud to everyone by the fire\.", "aloud"),
    (r"It was ((?:[A-Z][a-z]+day, )?day \d+, [^.]+)\.", "clock"),
]]


def loop_of(thing: str) -> str:
    """The open question `NAME wondered about the THING.` raises."""
    return f"Who left the {thing} behind?"


def read_events(prose: str) -> dict[str, Any]:
    """The extraction's keys (without the summary) that the prose's event sentences give."""
    out: dict[str, Any] = {k: [] for k in ("facts", "characters", "loops_opened",
                                           "loops_resolved", "relationships", "present",
                                           "status", "where", "travel", "items")}
    out["clock"] = ""

    def present(*names: str) -> None:
        out["present"] += [n for n in names if n not in out["present"]]

    for sentence in re.split(r"(?<=[.?!])\s+", " ".join(prose.split())):
        for pattern, kind in EVENTS:
            m = pattern.fullmatch(sentence)
            if m is None:
                continue
            g = m.groups()
            if kind == "died":
                out["status"].append({"name": g[0], "status": "dead", "how": g[1]})
            elif kind == "absent":
                out["status"].append({"name": g[0], "status": "absent", "how": "left for good"})
            elif kind == "went":
                out["where"].append({"name": g[0], "place": g[1]})
                out["travel"].append(g[0])
            elif kind in ("gains", "loses"):
                out["items"].append({"name": g[0], "item": g[1], "event": kind})
            elif kind == "gives":
                out["items"].append({"name": g[0], "item": g[1], "event": "gives", "to": g[2]})
            elif kind == "came":
                out["characters"].append({"name": g[0], "state": "arrived out of the storm"})
            elif kind == "state":
                out["characters"].append({"name": g[0], "state": g[1]})
            elif kind == "became":
                out["relationships"].append({"a": g[0], "b": g[1], "kind": g[2]})
            elif kind == "wondered":
                out["loops_opened"].append(loop_of(g[1]))
            elif kind == "settled":
                out["loops_resolved"].append(loop_of(g[1]))
            elif kind == "knew":
                out["facts"].append(f"The {g[0]} is known to all in the town")
            elif kind == "aloud":
                out["facts"].append(sentence.rstrip("."))     # copied: the tick drops it
            elif kind == "clock":
                out["clock"] = g[0]
            if kind not in ("knew", "clock"):
                present(*(x for x in (g[0], g[2] if kind == "gives" else None,
                                      g[1] if kind == "became" else None) if x))
            break
    return out


class ReadingModel(OfflineModel):
    """The offline model whose writer adds the test's events and whose extractor reads
    them back from the prose (see the module docstring)."""

    def __init__(self, seed: int = 0,
                 events: Mapping[int, list[str]] | None = None):
        super().__init__(seed=seed)
        self.events = dict(events or {})

    def describe(self) -> str:
        return f"reading model (offline, seed {self.seed}): the extractor reads the prose"

    def _plan(self, rng: random.Random, hints: Mapping[str, Any], request: Request) -> dict:
        plan = super()._plan(rng, hints, request)
        if int(hints.get("tick", 0)) % 4 == 0 and " " in plan["pov"] and \
                not any(c["name"] == plan["pov"] for c in plan["tool_calls"]):
            first = plan["pov"].split()[0]
            plan["characters"] = [first if c == plan["pov"] else c for c in plan["characters"]]
            plan["pov"] = first
        return plan

    def _prose(self, rng: random.Random, hints: Mapping[str, Any]) -> str:
        prose = super()._prose(rng, hints)
        events = self.events.get(int(hints.get("tick", 0)))
        return (" ".join(events) + "\n\n" if events else "") + prose    # first: never cut

    def _extract(self, rng: random.Random, hints: Mapping[str, Any]) -> dict:
        prose = str(hints.get("prose", ""))
        answer = read_events(prose)
        sentences = [s for s in re.split(r"(?<=[.!?])\s+", " ".join(prose.split()))
                     if len(s.split()) > 4]
        answer["summary"] = [f"The scene tells how {s[0].lower()}{s[1:]}"
                             for s in sentences[:3]] or ["The story moves on here."]
        return answer
