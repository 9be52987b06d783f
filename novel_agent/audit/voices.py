"""The voice rule: a line of dialogue that sounds like someone else's voice card.

A line said by one of the scene's people (text/speakers.py reads who from the
narration) that uses a tic of another person present (a word or phrase of their
card's `tics`, matched with its inflections as text.prose matches phrases) and none of
the speaker's own is noted; so is a line in which the speaker says what their own card
says they never say. Cheap and lexical: no model is asked. Each is a minor finding of
ConStory's "style" subtype, reported with the audit's others (it moves neither
`audit.mode: revise` nor `hold` unless `audit.act_on` is minor). Pure.
"""

from __future__ import annotations

from collections.abc import Sequence

from novel_agent.audit.findings import RULES, Finding
from novel_agent.story.memory.records import Character
from novel_agent.story.memory.store import Memory, find_person
from novel_agent.story.memory.voices import card, people_forms
from novel_agent.text.prose import PhraseList, slop_hits
from novel_agent.text.speakers import lines


def _said(line: str, phrases: Sequence[str]) -> list[str]:
    """The phrases of `phrases` that `line` says (as listed), each once."""
    if not phrases:
        return []
    return list(dict.fromkeys(hit.phrase for hit in slop_hits(line, PhraseList.of(phrases))))


def voice_findings(tick: int, prose: str, memory: Memory, names: Sequence[str]) -> list[Finding]:
    """The lines of `prose` said in a voice not the speaker's (see the module docstring);
    `names`: the scene's people (its POV, cast, who the extractor found present)."""
    people: dict[str, Character] = {}
    for name in names:
        found = find_person(memory, name) if name else None
        if found is not None:
            people.setdefault(str(found.get("id")), found)
    cards = {key: card(c) for key, c in people.items()}
    if not any(cards.values()):
        return []
    out = []
    for line in lines(prose, people_forms(people.values())):
        if line.speaker is None:
            continue
        speaker, mine = people[line.speaker], cards[line.speaker]
        said = str(speaker.get("name"))
        for never in _said(line.text, mine.get("never") or []):
            out.append(_finding(tick, line.text, f"{said}'s voice card: never says \"{never}\"",
                                f"{said} says \"{never}\", which their voice card says they "
                                "never say"))
        if _said(line.text, mine.get("tics") or []):
            continue
        for key, theirs in cards.items():
            used = _said(line.text, theirs.get("tics") or []) if key != line.speaker else []
            if used:
                other = str(people[key].get("name"))
                out.append(_finding(tick, line.text, f"{other}'s voice card: says "
                                    + ", ".join(f'"{t}"' for t in theirs["tics"]),
                                    f"{said} says \"{used[0]}\", {other}'s tic, and none of "
                                    "their own"))
                break
    return out


def _finding(tick: int, quote: str, against: str, message: str) -> Finding:
    return Finding(kind="voice", subtype=RULES["voice"], severity="minor", scene=tick,
                   quote=quote, against=against, message=message)
