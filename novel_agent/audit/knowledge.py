"""Checkable knowledge: who is alive, dead or absent, where each is, what each holds, how
each looks, who witnessed each fact, each with the scene that established it (the
story's clock is audit/clock.py's).

It lives in the memory files, where a hand edit fixes it:

    memory/characters/mara_quill.yaml     status: dead        status_in: 12
                                          status_how: drowned at the weir
                                          place: the harbour  place_in: 14
                                          holds: [a brass key]
                                          lost: [{item: a map, in: 9, how: gave it to Tobin}]
                                          appearance: {eye colour: {value: grey, in: 2}}
    memory/facts.yaml                     - {text: ..., scene: 3, witnesses: [Mara Quill]}

Delete `status: dead` and the character lives again for the audit; add a name to a
fact's `witnesses` and that character knows it. A fact without `witnesses` (older
than the audit, or written by hand) is known to everyone. Pure functions over a
Memory.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from novel_agent.story.decisions import Extraction
from novel_agent.story.memory.records import Character, Fact, Lost, Seen
from novel_agent.story.memory.store import Memory, find_person
from novel_agent.text.names import normalize_name
from novel_agent.text.places import not_a_place, place_name

STATUSES = ("alive", "dead", "absent")
_STOP = set("the a an and of to in at on for with from by his her their its was is that this "
            "had has have be been he she they it as into over under not no but or".split())


# -- matching ------------------------------------------------------------------------

def words_of(text: str) -> frozenset[str]:
    """The content words of a text (for matching a fact told or used to a known one)."""
    return _words_of(str(text))


@functools.lru_cache(maxsize=1 << 14)
def _words_of(text: str) -> frozenset[str]:
    """words_of, kept for the texts last asked: every fact is asked again for each fact a
    scene tells or uses."""
    return frozenset(w for w in re.findall(r"[a-z']+", text.lower())
                     if w not in _STOP and len(w) > 2)


def match_fact(facts: Sequence[Fact], text: str, *, before: int,
               least: float = 0.6) -> Fact | None:
    """The fact of a scene before `before` that `text` states (most content words shared,
    at least `least` of the shorter's), or None."""
    wanted = words_of(text)
    best, score = None, 0.0
    for fact in facts:
        scene = fact.get("scene")
        if not isinstance(scene, int) or scene >= before:
            continue
        theirs = words_of(fact.get("text", ""))
        if not wanted or not theirs:
            continue
        share = len(wanted & theirs) / min(len(wanted), len(theirs))
        if share > score:
            best, score = fact, share
    return best if score >= least else None


def item_key(item: str) -> str:
    """An object's key: "the Brass Key" and "a brass key" are one."""
    words = re.findall(r"[a-z0-9']+", str(item).lower())
    return " ".join(w for w in words if w not in {"a", "an", "the", "his", "her", "their", "my"})


def same_person(memory: Memory, a: str, b: str) -> bool:
    """Whether two names name one character (known, or spelled alike)."""
    pa, pb = find_person(memory, a), find_person(memory, b)
    if pa is not None and pb is not None:
        return pa is pb
    return normalize_name(a) == normalize_name(b)


def knows(memory: Memory, name: str, fact: Fact) -> bool:
    """Whether `name` knows `fact`: a fact without witnesses is everyone's."""
    witnesses = fact.get("witnesses")
    if not isinstance(witnesses, list):
        return True
    return any(same_person(memory, name, str(w)) for w in witnesses)


# -- applying a scene ----------------------------------------------------------------

def apply_knowledge(memory: Memory, extraction: Extraction, *, tick: int, location: str,
                    pov: str = "") -> list[str]:
    """Record what the scene establishes (in place), each with `tick`: status changes,
    where the people present are, objects gained and lost, how someone looks (the first
    statement of each feature), the witnesses of the facts
    the scene added (the POV and those present in person, when the extraction says who
    was; else the facts stay everyone's), the facts told. Returns what changed, one
    line each. Characters unknown to memory are left out."""
    changes: list[str] = []
    present = [n for n in [pov, *extraction.present] if n]
    for fact in memory.facts if extraction.present else ():   # who was there, when said:
        if fact.get("scene") == tick and "witnesses" not in fact:   # else everyone's
            fact["witnesses"] = _names(memory, present)
    for told in extraction.told:
        heard = match_fact(memory.facts, told.get("fact", ""), before=tick + 1)
        who = find_person(memory, told.get("to", ""))
        if heard is not None and who is not None and not knows(memory, who["name"], heard):
            heard.setdefault("witnesses", []).append(who["name"])
            changes.append(f"{who['name']} is told: {heard.get('text')}")
    for name in present:
        _place(memory, name, location, tick)
    for item in extraction.where:
        _place(memory, item.get("name", ""), item.get("place", ""), tick)
    for item in extraction.status:
        who, status = find_person(memory, item.get("name", "")), item.get("status", "")
        if who is not None and status in STATUSES and who.get("status", "alive") != status:
            who["status"], who["status_in"] = status, tick
            who["status_how"] = item.get("how", "") or status
            changes.append(f"{who['name']} is {status}")
    for item in extraction.items:
        changes += _object(memory, item, tick)
    for item in extraction.appearance:
        changes += _looks(memory, item, tick)
    return changes


def _names(memory: Memory, names: list[str]) -> list[str]:
    out: list[str] = []
    for name in names:
        who = find_person(memory, name)
        full = str(who["name"]) if who is not None else name
        if full not in out:
            out.append(full)
    return out


def _place(memory: Memory, name: str, place: str, tick: int) -> None:
    """Where `name` is as of `tick`: the place's name only (a model that copied the
    prompt's "last at the harbour in scene 6" back gives the harbour: text/places.py);
    a phrase of the prompt is not recorded."""
    who, place = find_person(memory, name), place_name(place)
    if who is not None and place and not not_a_place(place):
        who["place"], who["place_in"] = place, tick


def _object(memory: Memory, item: dict[str, str], tick: int) -> list[str]:
    who, thing, event = find_person(memory, item.get("name", "")), item.get("item", ""), \
        item.get("event", "")
    if who is None or not thing:
        return []
    key = item_key(thing)
    holds = [h for h in who.get("holds") or [] if item_key(h) != key]
    lost = [entry for entry in who.get("lost") or []
            if not (isinstance(entry, dict) and item_key(entry.get("item", "")) == key)]
    if event == "gains" or event == "uses":
        who["holds"], who["lost"] = [*holds, thing], lost
        _tidy(who)
        return [f"{who['name']} holds {thing}"] if event == "gains" else []
    if event in ("loses", "gives"):
        to = item.get("to", "")
        how = f"gave it to {to}" if event == "gives" and to else \
            ("gave it away" if event == "gives" else "lost it")
        who["holds"], who["lost"] = holds, [*lost, {"item": thing, "in": tick, "how": how}]
        _tidy(who)
        receiver = find_person(memory, to) if event == "gives" and to else None
        if receiver is not None:
            _object(memory, {"name": receiver["name"], "item": thing, "event": "gains"}, tick)
        return [f"{who['name']} {how}: {thing}"]
    return []


def _looks(memory: Memory, item: dict[str, str], tick: int) -> list[str]:
    """Record how someone looks, the first time a feature is stated (what a later scene
    states otherwise is the audit's finding, not a change; a hand edit changes it)."""
    who, feature, value = find_person(memory, item.get("name", "")), \
        str(item.get("feature", "")).lower(), item.get("value", "")
    if who is None or not feature or not value or looks(who, feature) is not None:
        return []
    known = who.get("appearance")
    who["appearance"] = {**(known if isinstance(known, dict) else {}),
                         feature: {"value": value, "in": tick}}
    return [f"{who['name']}'s {feature}: {value}"]


def looks(who: Character, feature: str) -> Seen | None:
    """What `who`'s file says of `feature` ({value, in}), or None."""
    known = who.get("appearance")
    entry = known.get(feature) if isinstance(known, dict) else None
    return entry if isinstance(entry, dict) and entry.get("value") else None


def _tidy(who: Character) -> None:
    if not who.get("holds"):
        who.pop("holds", None)
    if not who.get("lost"):
        who.pop("lost", None)


def lost_entry(who: Character, thing: str) -> Lost | None:
    """How `who` parted with `thing` ({item, in, how}), if they did and have not regained it."""
    key = item_key(thing)
    if any(item_key(h) == key for h in who.get("holds") or []):
        return None
    for entry in who.get("lost") or []:
        if isinstance(entry, dict) and item_key(entry.get("item", "")) == key:
            return entry
    return None
