"""What the planner and extractor decide: Plan, ToolCall, Extraction, their schemas, validation.

Each schema bounds its strings with `maxLength` (a small model under a grammar
otherwise rambles until `finish_reason: length`). In a book with an outline the
planner is also asked which beat its scene advances (`beat`, one of the ids it is
offered) and the extractor whether that beat happened (`beat_status`) and the
scene's tension with a reason (`pacing_from_json` corrects or drops what does not
fit); a book without one is asked exactly what it always was. Parsing the JSON text is
lenient_json.py's job; the `*_from_json` functions turn a dict into a typed answer or raise
ModelResponseError listing every problem, which the stage sends back once as a
repair request.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from novel_agent.errors import ModelResponseError
from novel_agent.story.memory.voices import proposed
from novel_agent.story.scenes import BEAT_STATUSES
from novel_agent.text.names import clean_bullets, cut_off, name_head, name_problem
from novel_agent.text.places import place_name

TOOLS = ("create_character", "update_character", "create_location", "add_relationship",
         "open_loop", "resolve_loop", "query_memory")


def _s(n: int, least: int = 1) -> dict[str, Any]:
    # minLength too: under a grammar a small model otherwise answers "" to be done.
    return {"type": "string", "minLength": least, "maxLength": n}


# An embedded local model plans with one tool and no query_memory (whose results a 1.5B
# asked for three times a tick, each a sentence of the bible, ~50 tokens apiece at 20
# tokens a second; the cast is made from the plan's names anyway), and a shorter intention.
LEAN_TOOLS = 1


INTENTION_CHARS = (240, 400)     # the lean and the full plan schema's longest intention
DETAIL_CHARS = (120, 200)        # ... and a tool call's detail
STATE_CHARS = 120                # an extracted character's state


def plan_schema(max_tools: int, lean: bool = False,
                beats: Sequence[str] = ()) -> dict[str, Any]:
    """JSON schema of the planner's answer (`lean`: an embedded local model's; `beats`: the
    ids of the outline's beats the scene may advance, the current one first)."""
    schema = _plan_schema(max_tools, lean)
    if beats:
        schema["properties"]["beat"] = {"type": "string", "enum": list(beats)}
        schema["required"].append("beat")
    return schema


def _plan_schema(max_tools: int, lean: bool) -> dict[str, Any]:
    tools = [t for t in TOOLS if t != "query_memory"] if lean else list(TOOLS)
    return {
        "type": "object",
        "properties": {
            "title": _s(80),
            "intention": _s(INTENTION_CHARS[0] if lean else INTENTION_CHARS[1], 12),
            "pov": _s(60),
            "location": _s(80),
            "characters": {"type": "array", "items": _s(60), "maxItems": 6},
            "tool_calls": {
                "type": "array",
                "maxItems": min(max_tools, LEAN_TOOLS) if lean else max_tools,
                "items": {
                    "type": "object",
                    "properties": {"tool": {"type": "string", "enum": tools},
                                   "name": _s(80), "target": _s(80),
                                   "detail": _s(DETAIL_CHARS[0] if lean else DETAIL_CHARS[1])},
                    "required": ["tool", "name", "detail"],
                },
            },
        },
        "required": ["title", "intention", "pov", "location", "characters", "tool_calls"],
    }


def _records(n: int, **fields: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "maxItems": n, "items": {
        "type": "object", "properties": fields, "required": list(fields)[:2]}}


# What an appearance the text states is of (audit/knowledge.py keeps the first of each).
FEATURES = ("eye colour", "hair colour", "height", "build", "scar")

# What the continuity audit checks (audit/knowledge.py): optional, each with a default.
KNOWLEDGE_SCHEMA: dict[str, Any] = {
    "present": {"type": "array", "items": _s(60), "maxItems": 8},     # in person: act or speak
    "recalled": {"type": "array", "items": _s(60), "maxItems": 4},    # only in a dream or memory
    "status": _records(3, name=_s(60), status={"type": "string",
                                               "enum": ["alive", "dead", "absent"]}, how=_s(100)),
    "where": _records(4, name=_s(60), place=_s(80)),
    "travel": {"type": "array", "items": _s(60), "maxItems": 4},      # who travels or arrives
    "items": _records(4, name=_s(60), item=_s(60), event={
        "type": "string", "enum": ["gains", "loses", "gives", "uses"]}, to=_s(60)),
    "told": _records(3, to=_s(60), fact=_s(160)),
    "knows": _records(3, name=_s(60), fact=_s(160)),   # facts a character acts on or names
    "clock": _s(60, 0),                                # the story's time, when the text states it
    "appearance": _records(4, name=_s(60), feature={"type": "string", "enum": list(FEATURES)},
                           value=_s(60)),             # how someone looks, as the text says
}

BULLET_CHARS = 160     # a summary bullet's, fact's or loop's longest string


def _extract_schema(summaries: int, facts: int, characters: int, loops: int,
                    relationships: int) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "summary": {"type": "array", "items": _s(BULLET_CHARS, 12),
                        "minItems": min(3, summaries), "maxItems": summaries},
            "facts": {"type": "array", "items": _s(BULLET_CHARS), "maxItems": facts},
            "characters": {"type": "array", "maxItems": characters, "items": {
                "type": "object", "properties": {"name": _s(60), "state": _s(STATE_CHARS)},
                "required": ["name", "state"]}},
            "loops_opened": {"type": "array", "items": _s(BULLET_CHARS), "maxItems": loops},
            "loops_resolved": {"type": "array", "items": _s(100), "maxItems": loops},
            "relationships": {"type": "array", "maxItems": relationships, "items": {
                "type": "object", "properties": {"a": _s(60), "b": _s(60), "kind": _s(60)},
                "required": ["a", "b", "kind"]}},
        },
        "required": ["summary", "facts", "characters", "loops_opened", "loops_resolved",
                     "relationships"],
    }


# The extractor's answer with the continuity audit's keys (KNOWLEDGE_SCHEMA), and the lean
# one an embedded local model is held to: without those keys (a 1.5B fills them with
# sentences, "present": "Edda sat in her cabin", a third of its answer and noise for the
# audit; its grammar then cannot write them), and with fewer items of each kind (its
# extraction is a quarter of a tick at 20 tokens a second; its prompt asks for as many).
EXTRACT_SCHEMA: dict[str, Any] = _extract_schema(6, 4, 4, 2, 2)
EXTRACT_SCHEMA["properties"].update(KNOWLEDGE_SCHEMA)
LEAN_EXTRACT_SCHEMA: dict[str, Any] = _extract_schema(3, 2, 2, 1, 1)
REASON_CHARS = 120      # the one line that says why a scene's tension is what it is
PACING_SCHEMA: dict[str, Any] = {
    "beat_status": {"type": "string", "enum": list(BEAT_STATUSES)},
    "tension": {"type": "integer", "minimum": 0, "maximum": 10},
    "tension_reason": _s(REASON_CHARS),
}


# A voice card the extractor proposes for someone who speaks in the scene and has none
# (story/memory/voices.py): a few words each, as their lines show.
VOICE_ITEM: dict[str, Any] = {
    "type": "object",
    "properties": {"name": _s(60), "diction": _s(100), "habits": _s(100),
                   "tics": {"type": "array", "items": _s(30), "maxItems": 4},
                   "never": {"type": "array", "items": _s(30), "maxItems": 4}},
    "required": ["name", "diction", "habits", "tics", "never"]}


def extract_schema(knowledge: bool = True, *, beat: bool = False, tension: bool = False,
                   opens: bool = True, voices: int = 0) -> dict[str, Any]:
    """The extractor's schema (`knowledge`: with the audit's keys), asking also whether the
    planned beat happened (`beat`) and the scene's tension with its reason (`tension`): in a
    book with an outline; in its final act (`opens` off) loops_opened holds none; and the
    voice cards of up to `voices` people who speak and have none. None of these:
    EXTRACT_SCHEMA or LEAN_EXTRACT_SCHEMA themselves."""
    base = EXTRACT_SCHEMA if knowledge else LEAN_EXTRACT_SCHEMA
    keys = [*(["beat_status"] if beat else []), *(["tension", "tension_reason"] if tension else [])]
    if not keys and opens and not voices:
        return base
    closed = {} if opens else {"loops_opened": {**base["properties"]["loops_opened"],
                                                "maxItems": 0}}
    cards = {"voices": {"type": "array", "items": VOICE_ITEM, "maxItems": voices}} \
        if voices else {}
    return {**base, "properties": {**base["properties"], **{k: PACING_SCHEMA[k] for k in keys},
                                   **closed, **cards},
            "required": [*base["required"], *keys, *cards]}


@dataclass(frozen=True)
class ToolCall:
    """One tool the planner asked for."""

    tool: str
    name: str = ""
    target: str = ""
    detail: str = ""

    def to_dict(self) -> dict[str, str]:
        return {"tool": self.tool, "name": self.name, "target": self.target, "detail": self.detail}


@dataclass(frozen=True)
class Plan:
    """The planner's decision for one scene."""

    intention: str
    pov: str
    location: str
    title: str = ""
    characters: list[str] = field(default_factory=list)
    tool_calls: list[ToolCall] = field(default_factory=list)
    beat: str = ""            # the outline's beat the scene advances ("3.2"), if any

    def to_dict(self) -> dict[str, Any]:
        out = {"title": self.title, "intention": self.intention, "pov": self.pov,
               "location": self.location, "characters": list(self.characters),
               "tool_calls": [c.to_dict() for c in self.tool_calls]}
        return out | ({"beat": self.beat} if self.beat else {})


@dataclass(frozen=True)
class Extraction:
    """What the extractor read out of a scene."""

    summary: list[str]
    facts: list[str] = field(default_factory=list)
    characters: list[dict[str, str]] = field(default_factory=list)
    loops_opened: list[str] = field(default_factory=list)
    loops_resolved: list[str] = field(default_factory=list)
    relationships: list[dict[str, str]] = field(default_factory=list)
    # For the continuity audit (KNOWLEDGE_SCHEMA); empty when the extractor gave none.
    present: list[str] = field(default_factory=list)
    recalled: list[str] = field(default_factory=list)
    status: list[dict[str, str]] = field(default_factory=list)
    where: list[dict[str, str]] = field(default_factory=list)
    travel: list[str] = field(default_factory=list)
    items: list[dict[str, str]] = field(default_factory=list)
    told: list[dict[str, str]] = field(default_factory=list)
    knows: list[dict[str, str]] = field(default_factory=list)
    clock: str = ""
    appearance: list[dict[str, str]] = field(default_factory=list)
    # In a book with an outline (PACING_SCHEMA): whether the planned beat happened, the
    # scene's tension and why; and what of these was corrected or dropped, one line each.
    beat_status: str = ""
    tension: int | None = None
    tension_reason: str = ""
    corrected: list[str] = field(default_factory=list, compare=False)
    # The voice cards proposed for people who speak in the scene and have none (VOICE_ITEM).
    voices: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """As the plan record keeps it: the audit's and the outline's keys only when given."""
        out = {"summary": self.summary, "facts": self.facts, "characters": self.characters,
               "loops_opened": self.loops_opened, "loops_resolved": self.loops_resolved,
               "relationships": self.relationships}
        out.update({key: getattr(self, key) for key in KNOWLEDGE_SCHEMA if getattr(self, key)})
        out.update({key: getattr(self, key) for key in PACING_SCHEMA
                    if getattr(self, key) not in (None, "")})
        return out | ({"voices": self.voices} if self.voices else {})


def plan_from_record(record: Mapping[str, Any]) -> Plan:
    """The Plan a plan record (`plans/plan_NNN.yaml`, or held.yaml's `record`) holds."""
    calls = [ToolCall(**{k: str(c.get(k) or "") for k in ("tool", "name", "target", "detail")})
             for c in record.get("tool_calls") or [] if isinstance(c, dict)]
    return Plan(intention=str(record.get("intention") or ""), pov=str(record.get("pov") or ""),
                location=str(record.get("location") or ""), title=str(record.get("title") or ""),
                characters=[str(c) for c in record.get("characters") or []], tool_calls=calls,
                beat=str(record.get("beat") or ""))


def plan_as_named(record: Mapping[str, Any]) -> Plan:
    """The plan a record holds as its tools ran it: with the POV and cast its planner named
    (`cast_named`, kept when memory names them otherwise: "Mara" for Mara Quill)."""
    plan, named = plan_from_record(record), record.get("cast_named")
    if not isinstance(named, dict):
        return plan
    return replace(plan, pov=str(named.get("pov") or ""),
                   characters=[str(c) for c in named.get("characters") or []])


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    return " ".join(str(value).split())


def _text_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return [_text(value)]
    return [t for t in (_text(v) for v in value) if t]


def plan_from_json(data: dict[str, Any], *, max_tools: int, beat: bool = False) -> Plan:
    """Validate a planner answer. Missing essentials raise ModelResponseError. `beat`: it
    was asked which beat the scene advances (the answer, whatever it is, is kept for the
    tick to check against the beats it offered)."""
    problems = []
    intention = _text(data.get("intention"))
    pov = _text(data.get("pov"))
    location = _text(data.get("location"))
    location = place_name(location) or location   # "last at the glassworks in scene 6"
    if not intention:
        problems.append("'intention' is empty")
    if not pov:
        problems.append("'pov' is empty")
    if not location:
        problems.append("'location' is empty")
    calls = []
    raw_calls = data.get("tool_calls") or []
    if not isinstance(raw_calls, list):
        problems.append("'tool_calls' must be a list")
        raw_calls = []
    for raw in raw_calls:
        if not isinstance(raw, dict):
            continue
        tool = _text(raw.get("tool"))
        if tool not in TOOLS:
            problems.append(f"unknown tool {tool!r} (tools: {', '.join(TOOLS)})")
            continue
        calls.append(ToolCall(tool, _text(raw.get("name")), _text(raw.get("target")),
                              uncut_at(_text(raw.get("detail")), DETAIL_CHARS)))
    if problems:
        raise ModelResponseError("plan: " + "; ".join(problems), stage="planner",
                                 raw=json.dumps(data)[:2000])
    named = (name_head(c, name_problem) for c in _text_list(data.get("characters")))
    characters = [c for c in named if not name_problem(c)]
    if pov and pov.lower() not in (c.lower() for c in characters):
        characters.insert(0, pov)
    return Plan(intention=uncut_at(intention, INTENTION_CHARS), pov=pov, location=location,
                title=_text(data.get("title"))[:80], characters=characters[:8],
                tool_calls=calls[:max_tools], beat=_text(data.get("beat"))[:40] if beat else "")


def extraction_from_json(data: dict[str, Any], *, beat: bool = False,
                         tension: bool = False) -> Extraction:
    """Validate an extractor answer: at least one summary bullet is required. `beat` and
    `tension`: it was asked for the beat's status and the scene's tension (PACING_SCHEMA),
    taken as pacing_from_json takes them."""
    summary = clean_bullets([uncut(b, BULLET_CHARS) for b in _text_list(data.get("summary"))])
    if not summary:
        raise ModelResponseError("extraction: 'summary' has no bullets that are prose",
                                 stage="extractor", raw=json.dumps(data)[:2000])

    def records(key: str, fields: tuple[str, ...]) -> list[dict[str, str]]:
        out = []
        for item in data.get(key) or []:
            if isinstance(item, dict) and all(_text(item.get(f)) for f in fields[:1]):
                out.append({f: _text(item.get(f)) for f in fields})
        return out

    facts = (uncut_at(f, (BULLET_CHARS,)) for f in _text_list(data.get("facts")))
    return Extraction(
        summary=summary[:6],
        facts=[f for f in facts if not f.endswith(" …")][:6],   # a fact cut off: not known
        characters=[{**c, "name": name_head(c["name"], name_problem),
                     "state": uncut_at(c["state"], (STATE_CHARS,))}
                    for c in records("characters", ("name", "state"))][:6],
        loops_opened=_text_list(data.get("loops_opened"))[:3],
        loops_resolved=_text_list(data.get("loops_resolved"))[:3],
        relationships=[r for r in records("relationships", ("a", "b", "kind"))
                       if r["b"] and r["kind"]][:3],
        **knowledge_from_json(data),
        **pacing_from_json(data, beat=beat, tension=tension),
        voices=voices_from_json(data),
    )


def voices_from_json(data: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The voice cards of an extractor answer (or a plan record), leniently: each with a
    name, its fields cut to their sizes (story/memory/voices.proposed); what is malformed is
    left out."""
    raw = data.get("voices")
    out = []
    for item in raw if isinstance(raw, list) else []:
        if isinstance(item, dict) and _text(item.get("name")):
            card = proposed(item)
            if card:
                out.append({"name": _text(item.get("name"))[:60], **card})
    return out[:4]


def pacing_from_json(data: Mapping[str, Any], *, beat: bool = False,
                     tension: bool = False) -> dict[str, Any]:
    """The beat's status and the scene's tension of an extractor answer (only the keys
    asked for), leniently: a tension out of 0-10 is taken as the nearest end of it, a
    number in words or a status not one of BEAT_STATUSES is dropped, each said in
    `corrected`; never an error."""
    out: dict[str, Any] = {"corrected": []}
    said = data.get("beat_status")
    if beat and said is not None:
        status = _text(said).lower().strip(" .!\"'")
        if status in BEAT_STATUSES:
            out["beat_status"] = status
        else:
            out["corrected"].append(f"the extractor's beat status {_text(said)[:40]!r} is not "
                                    f"{', '.join(BEAT_STATUSES)}: dropped")
    value = data.get("tension")
    if tension and value is not None:
        number = _number(value)
        if number is None:
            out["corrected"].append(f"the extractor's tension {_text(value)[:40]!r} is not a "
                                    "number from 0 to 10: dropped")
        else:
            out["tension"] = min(10, max(0, round(number)))
            if not 0 <= number <= 10:
                out["corrected"].append(f"the extractor's tension {_text(value)[:40]} is not "
                                        f"from 0 to 10: taken as {out['tension']}")
    if tension and out.get("tension") is not None:
        out["tension_reason"] = uncut_at(_text(data.get("tension_reason")), (REASON_CHARS,))
    return out


def _number(value: Any) -> float | None:
    """A number given as one ("7", 6.5, "8/10"); None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value) if value == value and abs(value) != float("inf") else None
    found = re.fullmatch(r"\s*(-?\d+(?:\.\d+)?)\s*(?:/\s*10)?\s*", str(value))
    return float(found.group(1)) if found else None


def uncut_at(text: str, limits: tuple[int, ...]) -> str:
    """`uncut` for a string whose schema's limit is one of `limits` (a lean one and the
    full one): only a string that ends at one of them can have been stopped there."""
    for limit in limits:
        if limit - 4 <= len(text) <= limit:
            return uncut(text, limit)
    return text


def uncut(text: str, limit: int) -> str:
    """A string a grammar stopped at its `limit` in mid-sentence, ended where it can be:
    at its last sentence if that keeps half of it, else at its last whole word, with
    "…" ("…the eerie silence thatsurr" -> "…the eerie silence …"). Others are unchanged."""
    text = text.strip()
    if not cut_off(text, limit):
        return text
    ends = [m.end() for m in re.finditer(r"[.!?][\"'”’)]*(?=\s)", text)]
    if ends and ends[-1] >= len(text) // 2:
        return text[:ends[-1]]
    words = text.split()[:-1]
    return " ".join(words).rstrip(",;:—–-") + " …" if words else text


def knowledge_from_json(data: dict[str, Any]) -> dict[str, Any]:
    """The audit's keys of an extractor answer (or a plan record), leniently: what is
    malformed is left out, never an error."""
    def records(key: str, fields: tuple[str, ...], n: int) -> list[dict[str, str]]:
        out, raw = [], data.get(key)
        for item in raw if isinstance(raw, list) else []:
            if isinstance(item, dict) and all(_text(item.get(f)) for f in fields[:2]):
                out.append({f: _text(item.get(f)) for f in fields if _text(item.get(f))})
        return out[:n]

    return {"present": _text_list(data.get("present"))[:8],
            "recalled": _text_list(data.get("recalled"))[:4],
            "status": [r for r in records("status", ("name", "status", "how"), 3)
                       if r["status"] in ("alive", "dead", "absent")],
            "where": records("where", ("name", "place"), 4),
            "travel": _text_list(data.get("travel"))[:4],
            "items": [r for r in records("items", ("name", "item", "event", "to"), 4)
                      if r.get("event") in ("gains", "loses", "gives", "uses")],
            "told": records("told", ("to", "fact"), 3),
            "knows": records("knows", ("name", "fact"), 3),
            "clock": _text(data.get("clock"))[:60],
            "appearance": [{**r, "feature": r["feature"].lower()}
                           for r in records("appearance", ("name", "feature", "value"), 4)
                           if r.get("value") and r["feature"].lower() in FEATURES]}
