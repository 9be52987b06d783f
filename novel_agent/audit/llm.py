"""The LLM auditor's answer: its JSON schema, parsing, and the check of its quotes.

The auditor must quote the draft for every finding and say what it contradicts.
A finding whose quote is not in the draft (after whitespace, case and typographic
quotes are evened out), or that names nothing it contradicts, is discarded and
counted: an auditor cannot report what it cannot show. What it contradicts is
traced to its scene (`against_scene`): the scene the auditor names, else the one
`against` names ("Scene 4: ..." as its briefing lists them), else the scene of the
fact or the earlier scene's summary that `against` states.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from novel_agent.audit.findings import SEVERITIES, SUBTYPES, Finding
from novel_agent.audit.knowledge import match_fact
from novel_agent.errors import ModelResponseError
from novel_agent.story.memory.records import Fact

MAX_FINDINGS = 8

AUDIT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "findings": {"type": "array", "maxItems": MAX_FINDINGS, "items": {
            "type": "object",
            "properties": {
                "subtype": {"type": "string", "enum": list(SUBTYPES)},
                "severity": {"type": "string", "enum": list(SEVERITIES)},
                "quote": {"type": "string", "minLength": 8, "maxLength": 300},
                "against": {"type": "string", "minLength": 8, "maxLength": 300},
                "message": {"type": "string", "minLength": 1, "maxLength": 160},
                "against_scene": {"type": "integer", "minimum": 0},
            },
            "required": ["subtype", "severity", "quote", "against", "message"]}},
    },
    "required": ["findings"],
}


def findings_from_json(data: dict[str, Any]) -> list[dict[str, str]]:
    """The auditor's findings as given; an answer without a `findings` list raises
    ModelResponseError (ask_json asks once more)."""
    found = data.get("findings") if isinstance(data, dict) else None
    if not isinstance(found, list):
        raise ModelResponseError("auditor: 'findings' must be a list (empty when the scene "
                                 "contradicts nothing)", stage="auditor",
                                 raw=json.dumps(data)[:2000])
    return [{k: " ".join(str(v).split()) for k, v in item.items() if v is not None}
            for item in found if isinstance(item, dict)]


def _even(text: str) -> str:
    text = text.replace("“", '"').replace("”", '"').replace("‘", "'").replace("’", "'")
    return " ".join(re.sub(r"[\"'`]", "", text.casefold()).split()).strip(" .…")


@dataclass
class Verified:
    """The findings kept, and how many were discarded for want of a verifiable quote."""

    findings: list[Finding]
    discarded: int


def verify(raw: list[dict[str, str]], draft: str, *, tick: int,
           facts: Sequence[Fact] = (),
           scenes: Sequence[tuple[int, str]] = ()) -> Verified:
    """Keep the findings whose quote is in `draft` and that say what they contradict,
    each traced to the scene it contradicts (`against_scene`, from the `facts` and
    `scenes` the auditor was shown); an unknown subtype or severity is evened out
    (style, minor) rather than dropped."""
    text, kept, dropped = _even(draft), [], 0
    for item in raw:
        quote, against = item.get("quote", ""), item.get("against", "")
        if len(_even(quote)) < 8 or _even(quote) not in text or not against.strip():
            dropped += 1
            continue
        subtype, severity = item.get("subtype", ""), item.get("severity", "")
        kept.append(Finding(kind="llm", subtype=subtype if subtype in SUBTYPES else "style",
                            severity=severity if severity in SEVERITIES else "minor",
                            scene=tick, quote=quote, against=against,
                            against_scene=against_scene(item, tick, facts, scenes),
                            message=item.get("message", "") or subtype, source="llm"))
    return Verified(kept, dropped)


def against_scene(item: dict[str, str], tick: int, facts: Sequence[Fact],
                  scenes: Sequence[tuple[int, str]]) -> int:
    """The scene before `tick` that finding `item` contradicts: the one it names (as
    `against_scene`, or "scene N" in `against`), else the scene of the fact or of the
    scene summary `against` states; 0 when none is found."""
    against = item.get("against", "")
    named = [item.get("against_scene", ""), *re.findall(r"\bscene\s+(\d+)", against, re.I)]
    for value in named:
        if str(value).strip().isdigit() and 0 < int(value) < tick:
            return int(value)
    told: list[Fact] = [*facts, *(Fact(text=summary, scene=t) for t, summary in scenes)]
    found = match_fact(told, against, before=tick)
    return int(found["scene"]) if found is not None else 0
