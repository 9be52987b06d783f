"""A follow model: the offline model as a model that does what its prompts ask.

Its planner reads the planner's prompt as a careful model would: it names the beat it
is offered first (the plan schema's `beat` enum, else the "Current beat" of "Where the
book stands"), writes an intention that says what that beat is, resolves the loops it
is shown as due (`shown_due`) with `resolve_loop`, and now and then (seeded) opens a
loop of its own, never in the book's final act. Its writer writes that intention. Its
extractor says the planned beat was done (with a small seeded chance, `partly`, of
"partly", so a beat now and then takes two scenes; never once the chapter's room is used
up, when the prompt says to land it now), and rates the scene's tension as the target
the planner was shown plus seeded noise of up to `noise` either way.

What the planner was shown is kept from its call for the writer's and the extractor's
of the same tick (the extractor is not shown the target), so it works alike in-process
(`make_model=lambda: FollowModel()`) and behind the test server
(story_server.py's StoryServer, through the real openai SDK). Used by bench/shape.py.

The loops "shown as due" are those "Where the book stands" lists under "Loops due" (or,
in an ending scene, "Loops that must be paid off now"), each by its id: the payoffs'
protocol (context/book_brief.py). A book whose planner is shown no such list (no loop
has a payoff yet) falls back on the open loops of "Open plot loops" that opened at
least `ripen` scenes before this one, or all of them in the final act.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from novel_agent.models.base import Request
from novel_agent.models.offline import OBJECTS, QUESTIONS, OfflineModel, _asked

ACT = re.compile(r"\bAct (\d+) of (\d+)")
CURRENT = re.compile(r"^Current beat (\S+?)(?: \(tension \d+\))?: (.*)$", re.M)
BARE_BEAT = re.compile(r"; beat (\S+?)(?: \(tension \d+\))?: ([^;]*?)(?: \(OVERDUE[^)]*\))?;")
TARGET = re.compile(r"this scene's target is (\d+) of 10|target tension (\d+)")
USED_UP = "The chapter's room is used up"
SCENE = re.compile(r"Plan scene (\d+)")
LOOP = re.compile(r"^\[([a-z0-9_]+)\](.*?)(?: \(opened in scene (\d+)\))?\s*$")
DUE = re.compile(r"^- \[([a-z0-9_]+)\] .*\(payoff [^)]*\)\s*$")
DUE_HEADS = ("Loops due", "Loops that must be paid off now")
BARE_DUE = re.compile(r"; loops due: ([a-z0-9_, ]+)")
FINAL_ACT = "Final act: open no new loop"


@dataclass(frozen=True)
class Shown:
    """What the planner's prompt showed of where the book stands, for the tick's later calls."""

    scene: int = 0                 # the scene being planned
    beat: str = ""                 # the current beat's id
    what: str = ""                 # and what must happen in it
    target: int | None = None      # the scene's target tension
    act: tuple[int, int] = (0, 0)  # (act, acts)
    used_up: bool = False          # the chapter's room is used up: land the beat now
    loops: list[tuple[str, int | None]] = field(default_factory=list)   # (id, opened in)
    due: list[str] | None = None   # the ids listed as due (None: no such list shown)

    told_final: bool = False       # the prompt says the final act opens no new loop

    @property
    def final_act(self) -> bool:
        return self.told_final or (self.act[1] > 0 and self.act[0] == self.act[1])


def section(prompt: str, title: str) -> str:
    """The body of the prompt's "## title" section ('' when it has none)."""
    found = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", prompt, re.S | re.M)
    return found.group(1).strip() if found else ""


def read_shown(prompt: str) -> Shown:
    """What a planner's prompt (its messages joined) shows: the scene, the current beat,
    the target tension, the act, whether the chapter's room is used up, the loops."""
    standing = section(prompt, "Where the book stands")
    beat = CURRENT.search(standing) or BARE_BEAT.search(standing)
    target = TARGET.search(standing)
    act = ACT.search(standing)
    scene = SCENE.search(prompt)
    loops = []
    for line in section(prompt, "Open plot loops").splitlines():
        found = LOOP.match(line.strip())
        if found:
            loops.append((found.group(1), int(found.group(3)) if found.group(3) else None))
    return Shown(due=due_listed(standing), told_final=FINAL_ACT in standing,
                 scene=int(scene.group(1)) if scene else 0,
                 beat=beat.group(1) if beat else "", what=beat.group(2).strip() if beat else "",
                 target=int(target.group(1) or target.group(2)) if target else None,
                 act=(int(act.group(1)), int(act.group(2))) if act else (0, 0),
                 used_up=USED_UP in standing, loops=loops)


def due_listed(standing: str) -> list[str] | None:
    """The loop ids "Where the book stands" lists as due, in its order (None: it lists none)."""
    bare = BARE_DUE.search(standing)
    if bare:
        return [i.strip() for i in bare.group(1).split(",") if i.strip()]
    if not any(head in standing for head in DUE_HEADS):
        return None
    return [found.group(1) for line in standing.splitlines()
            if (found := DUE.match(line.strip()))]


def shown_due(shown: Shown, ripen: int) -> list[str]:
    """The ids of the loops the planner was shown as due: those "Where the book stands"
    lists (the payoffs' protocol); without that list, the open loops shown that opened
    `ripen` scenes or more before this one (one shown without the scene it opened in is
    due), and every one in the final act."""
    if shown.due is not None:
        return list(shown.due)
    return [loop for loop, opened in shown.loops
            if shown.final_act or opened is None or shown.scene - opened >= ripen]


class FollowModel(OfflineModel):
    """Answers that follow the outline, the pacing and the loops the prompt shows (see
    the module docstring)."""

    def __init__(self, seed: int = 0, *, partly: float = 0.05,
                 noise: int = 2, opens: float = 0.2, ripen: int = 6):
        super().__init__(seed=seed)
        self.partly, self.noise, self.opens, self.ripen = partly, noise, opens, ripen
        self.shown = Shown()

    def describe(self) -> str:
        return f"follow model (offline, seed {self.seed}): does what the prompt asks"

    def _rng(self, what: str, hints: Mapping[str, Any]) -> random.Random:
        return random.Random(f"{what}|{self.seed}|{hints.get('tick', 0)}|{self.shown.scene}")

    def _beat(self, request: Request) -> dict[str, str]:
        offered = _asked(request, "beat").get("enum") or []
        beat = str(offered[0]) if offered else self.shown.beat
        return {"beat": beat} if beat and (offered or _asked(request, "beat")) else {}

    def _plan(self, rng: random.Random, hints: Mapping[str, Any], request: Request) -> dict:
        self.shown = read_shown("\n".join(m.get("content", "") for m in request.messages))
        plan = super()._plan(rng, hints, request)
        max_tools = (request.json_schema or {}).get("properties", {}).get(
            "tool_calls", {}).get("maxItems", 3)
        calls = [{"tool": "resolve_loop", "name": loop, "target": "",
                  "detail": f"{plan['pov']} finds the answer"}
                 for loop in shown_due(self.shown, self.ripen)]
        chance = self._rng("opens", hints)
        if not self.shown.final_act and chance.random() < self.opens:
            question = chance.choice(QUESTIONS).format(
                obj=chance.choice(OBJECTS), name=plan["characters"][-1], place=plan["location"])
            calls.append({"tool": "open_loop", "name": "", "target": "", "detail": question})
        calls += [c for c in plan["tool_calls"] if c["tool"] not in ("open_loop", "resolve_loop")]
        plan["tool_calls"] = calls[:max_tools]
        if self.shown.what:
            plan["intention"] = (f"{self.shown.what} {plan['pov']} is at {plan['location']} "
                                 "when it happens.")
        return plan

    def _pacing(self, request: Request, hints: Mapping[str, Any]) -> dict[str, Any]:
        rng = self._rng("pacing", hints)
        out: dict[str, Any] = {}
        if _asked(request, "beat_status"):
            late = self.shown.used_up
            out["beat_status"] = "partly" if not late and rng.random() < self.partly else "done"
        if _asked(request, "tension"):
            target = self.shown.target
            if target is None:
                target = int(hints.get("target_tension", 5))
            out["tension"] = min(10, max(0, target + rng.randint(-self.noise, self.noise)))
            out["tension_reason"] = "The scene turns on what its beat puts at stake."
        return out
