"""A character's presence: dead or absent (and since when, and how), where last seen,
what they hold, in the words a prompt's items use.

The continuity audit records it in each character's memory file (audit/knowledge.py:
`status`, `status_in`, `status_how`, `place`, `place_in`, `holds`); every form of a
character's item says it (describe_character, character_line, `called`), down to the
bare name: "Anselm Vey (dead)". What a prompt must keep byte for byte between ticks
(the planner's settled characters, the writer's cast) is a card as of a tick
(`settled_card`): a death or an absence established by then, never where the
character is or what they hold, which move with nearly every scene and are told in
the prompt's volatile tail. Pure functions of a character's dict.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import cast

from novel_agent.story.memory.records import Character
from novel_agent.text.places import place_name

GONE = ("dead", "absent")
MOVING = ("place", "place_in", "holds", "lost")       # change with nearly every scene
STATUS = ("status", "status_in", "status_how")
HOW_WORDS = 12        # of how a character died or left, in a card
HELD_SHOWN = 4        # things a character holds, named in a card


def gone(c: Character | None) -> str:
    """"dead" or "absent" when memory says so, else ""."""
    status = c.get("status") if c else None
    return status if status in GONE else ""


def status_since(c: Character) -> int:
    """The scene that made the character dead or absent (0 when not stated)."""
    value = c.get("status_in")
    return value if type(value) is int else 0


def status_text(c: Character, how: bool = True) -> str:
    """"dead since scene 15: drowned at the weir" ("dead since scene 15" without `how`;
    "" for the living)."""
    status = gone(c)
    return ": ".join(t for t in (f"{status} {_since(c)}".strip(), _how(c) if how else "")
                     if t) if status else ""


def when(c: Character) -> str:
    """"since scene 15: drowned at the weir" of one dead or absent (either part alone,
    or "", when the other is not stated)."""
    return ": ".join(t for t in (_since(c), _how(c)) if t)


def _since(c: Character) -> str:
    scene = status_since(c)
    return f"since scene {scene}" if scene else ""


def _how(c: Character) -> str:
    """How they died or left, in at most HOW_WORDS words ("" when it says no more than
    the status)."""
    words = str(c.get("status_how") or "").split()
    if " ".join(words) == gone(c):
        return ""
    return " ".join(words[:HOW_WORDS]) + (" …" if len(words) > HOW_WORDS else "")


def where_text(c: Character) -> str:
    """"last at the harbour in scene 14" ("" when not known, or for the dead): the scene
    said once, whatever a hand or an older version left in the file's `place` ("the
    harbour in scene 13" is the harbour: text/places.py)."""
    place = place_name(str(c.get("place") or ""))
    if not place or gone(c) == "dead":
        return ""
    scene = c.get("place_in")
    return f"last at {place}" + (f" in scene {scene}" if type(scene) is int and scene else "")


def holds_text(c: Character) -> str:
    """"holds a brass key, a map" (the first HELD_SHOWN, then how many more; "had ..."
    for the dead); "" for none."""
    held = [" ".join(str(h).split()) for h in c.get("holds") or [] if str(h).strip()]
    if not held:
        return ""
    more = len(held) - HELD_SHOWN
    verb = "had" if gone(c) == "dead" else "holds"
    return f"{verb} " + ", ".join(held[:HELD_SHOWN]) + (f" and {more} more" if more > 0 else "")


def whereabouts(c: Character) -> list[str]:
    """Where the character was last and what they hold, as parts of a card."""
    return [t for t in (where_text(c), holds_text(c)) if t]


def called(c: Character) -> str:
    """A character's barest form: the name, with "(dead)" or "(absent)" when so."""
    name = str(c.get("name", c.get("id", "?")))
    status = gone(c)
    return f"{name} ({status})" if status else name


def unsettled(c: Character, tick: int) -> tuple[str, ...]:
    """The fields of a character a card that stays put until `tick` moves leaves out:
    where they are and what they hold, and a death or an absence established after
    `tick` (one memory has as dead since scene 15 is alive at tick 10)."""
    return MOVING + STATUS if status_since(c) > tick else MOVING


def settled_card(c: Character, tick: int) -> Character:
    """The character without its `unsettled` fields (itself when it has none)."""
    drop = unsettled(c, tick)
    if not any(key in c for key in drop):
        return c
    return cast(Character, {k: v for k, v in c.items() if k not in drop})


def known_as(c: Character) -> str:
    """The extractor's form of a known character: the name, then whether dead or absent,
    where last and what they hold ("Mara Quill (last at the harbour; holds a brass key)")."""
    place = place_name(str(c.get("place") or ""))
    parts = [gone(c), f"last at {place}" if place and gone(c) != "dead" else "", holds_text(c)]
    said = "; ".join(p for p in parts if p)
    return f"{c.get('name', c.get('id', '?'))} ({said})" if said else called(c)


GONE_SAID = {"dead": ("dead", "and cannot act or speak in this scene, only be remembered"),
             "absent": ("away", "and not in this scene")}


def gone_people(people: Iterable[Character], present: Sequence[str] = (),
                limit: int = 6) -> list[Character]:
    """The dead and the absent among `people` the writer's brief names: the dead, then
    the absent, each the newest first, at most `limit` of each. An absent one the
    scene's cast (`present`) names is left out: the planner brings them back."""
    here = {n.lower() for n in present}
    chosen: dict[str, Character] = {}
    for c in people:
        status = gone(c)
        if status == "dead" or status == "absent" and str(c.get("name", "")).lower() not in here:
            chosen.setdefault(str(c.get("id", c.get("name"))), c)
    return [c for status in GONE_SAID
            for c in sorted((c for c in chosen.values() if gone(c) == status),
                            key=status_since, reverse=True)[:limit]]


def gone_forms(c: Character) -> tuple[tuple[str, str], ...]:
    """A dead or absent one as the brief may name them, rich to bare, each (name, what is
    told after it): (" (since scene 15: drowned at the weir)"), (" (since scene 15)"),
    ("")."""
    name, since = str(c.get("name")), _since(c)
    told = [f" ({when(c)})" if when(c) else "", f" ({since})" if since else "", ""]
    return tuple((name, t) for t in dict.fromkeys(told))


def gone_said(named: Sequence[tuple[str, str, str]]) -> list[str]:
    """The brief's sentences about the dead and the absent, from (status, name, told) in
    order: "Anselm Vey is dead (since scene 15: drowned at the weir) and cannot act or
    speak in this scene, only be remembered."; several of one status in one sentence."""
    out = []
    for status, (word, rest) in GONE_SAID.items():
        group = [(name, told) for said, name, told in named if said == status]
        if len(group) == 1:
            out.append(f"{group[0][0]} is {word}{group[0][1]} {rest}.")
        elif group:
            listed = [name + told for name, told in group]
            out.append(f"{', '.join(listed[:-1])} and {listed[-1]} are {word} {rest}.")
    return out


def gone_sentences(people: Iterable[Character], present: Sequence[str] = (),
                   limit: int = 6) -> list[str]:
    """The writer's plain sentences about the dead and the absent among `people`
    (`gone_people`), each told in full: "Anselm Vey is dead (since scene 15: drowned at
    the weir) and cannot act or speak in this scene, only be remembered." """
    return gone_said([(gone(c), *gone_forms(c)[0]) for c in gone_people(people, present, limit)])
