"""A place's name out of what a model answered for one: no prompt wording around it.

A prompt says where each character was last seen ("Ines Karr (last at the mountain
glassworks in scene 6)", context/presence.py). A small model copies that back: as the
plan's location, or as the place its extraction says someone is at, "the mountain
glassworks in scene 6". Stored as it was, the next prompt said "last at the mountain
glassworks in scene 6 in scene 7", one scene longer each tick, and the writer, told "At
Inside the mountain glassworks in scene 6.", wrote "moving towards Inside the mountain
glassworks" (issue 51, item 4). `place_name` takes the prompt's words off ("last at",
"in scene 6", "(scene 6)", a leading "inside the", what follows a semicolon);
`not_a_place` says why what is left is still a phrase of a prompt rather than a place
("" for a place). Pure functions of their argument.
"""

from __future__ import annotations

import re

# "… last seen at X", "last at X": what comes after is the place
_LAST_AT = re.compile(r"^(?P<open>[^(]*\()?\s*(?:was\s+)?last\s+(?:seen\s+)?(?:at|in|near|by|on)\s+",
                      re.IGNORECASE)
# "in scene 6", "(scene 6)", "since scene 6", "scenes 6-7", at the end, any number of times
_SCENE_TAIL = re.compile(r"[\s,;:.—–-]*\(?\s*(?:(?:last\s+)?(?:seen\s+)?(?:in|since|of|at|from|"
                         r"during|by)\s+)?(?:the\s+)?scenes?\s+\d+(?:\s*(?:[-–,]|and|to)\s*\d+)*"
                         r"\s*\)?[\s.,;:]*$", re.IGNORECASE)
# "Inside the mountain glassworks", "At the harbour": the place is what the preposition
# stands before (one that says where from it, "outside the gate", is part of the place)
_INSIDE = re.compile(r"^(?:inside|within|in|at)\s+(?=(?:the|a|an)\s+\S)", re.IGNORECASE)
_PROMPT = re.compile(r"\b(?:scenes?|chapters?|prompt|premise|the story|this story|the reader|"
                     r"the (?:book|novel)|last (?:seen|at)|only be remembered|cannot act|"
                     r"not in this|the planner|the writer|the author)\b", re.IGNORECASE)
# a place's name ends in none of these: "the same room as" is what is left of "the same
# room as in scene 5"
_DANGLING = re.compile(r"\b(?:as|of|the|a|an|and|or|to|from|in|at|on|by|with|where|which|"
                       r"that)$", re.IGNORECASE)
MAX_WORDS = 10      # a place named in more words than this is a sentence about one


def place_name(text: str) -> str:
    """The place `text` names, without the prompt's words around it ("" when nothing is
    left).

    >>> place_name("last at the mountain glassworks in scene 6 in scene 7")
    'the mountain glassworks'
    >>> place_name("Inside the mountain glassworks (scene 6)")
    'the mountain glassworks'
    >>> place_name("Skerry Light")
    'Skerry Light'
    """
    place = " ".join(str(text or "").split())
    while True:
        before = place
        last = _LAST_AT.match(place)
        if last:              # "Ines Karr (last at the glassworks; holds …)": to the ")"
            place = place[last.end():]
            place = place.split(")", 1)[0] if last.group("open") else place
        place = place.split(";", 1)[0]
        place = _SCENE_TAIL.sub("", place).strip(" \t,.:;—–-\"")
        place = _INSIDE.sub("", place)
        if place == before:
            return place


def not_a_place(text: str) -> str:
    """Why `text` (a place_name) is a phrase of a prompt rather than a place's name, or ""
    for a place: it talks of scenes, the story or the prompt ("the same room as in the
    last scene"), it ends where a phrase goes on ("the same room as"), or it is a sentence
    (more than MAX_WORDS words).

    >>> not_a_place("the harbour")
    ''
    >>> not_a_place("the place where the story began")
    'a phrase of the prompt, not a place'
    """
    if not text.strip():
        return "empty"
    if _PROMPT.search(text):
        return "a phrase of the prompt, not a place"
    if _DANGLING.search(text):
        return "a phrase cut short, not a place"
    if len(text.split()) > MAX_WORDS:
        return f"{len(text.split())} words, a sentence rather than a place"
    return ""
