"""Who an imported piece names, and who tells it. Pure functions of the text.

    named(people, text)            each mention of a known person, once, in order
    guess_pov(people, text, ...)   the person the piece is told by, or ""

A person is named by their whole name, an alias, their first name, their surname alone
or a title and the surname ("Mr. Aubrey", "Inspector Dunmore"): each mention counts
once, the longest form that stands there ("Tomas Reyne" is not also "Tomas"). A form
two people share ("Ida" of Ida Fennick and Ida Fenwick) names the one whose whole
name the text writes, else no one.

The POV is the person the piece weighs most: a mention counts 1, and each time a person
perceives (is the subject of a verb of seeing, hearing, thinking or feeling: "Clara
watched", "Dunmore knew", "she thought" in a sentence, or after one, whose subject is
Clara; "I saw" in a piece that says whose "I" it is: "my name is Clara Marsh", else
the book's protagonist) counts PERCEIVES more. No one found dead, lying dead or
drowned in the piece tells it, nor anyone dead before it (`dead`). A tie goes to the
last scene's POV, then to whoever the piece names first.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from novel_agent.text.names import PARTICLES
from novel_agent.text.prose.split import dialogue, sentences

PERCEIVES = 3       # what one perceiving counts, against 1 for a mention
_PERCEIVING = (r"(?:saw|seen|sees?|watched|watch(?:es)?|heard|hears?|listened|listens|noticed|"
               r"notices|felt|feels?|thought|thinks?|knew|known|knows?|wondered|wonders?|"
               r"reali[sz]ed|reali[sz]es|remembered|remembers?|understood|understands?|wanted|"
               r"wants?|feared|fears?|hoped|hopes?|dreamed|dreamt|dreams?|smelled|smelt|"
               r"smells?|sensed|senses?|believed|believes?|decided|decides?|recogni[sz]ed|"
               r"guessed|suspected|suspects?|tasted|glimpsed|stared|stares?|imagined|"
               r"supposed|doubted|worried|looked (?=at|up|down|about|around|behind|into|"
               r"through|out|over|back|across|away)|looks (?=at|up|down|about|around))")
_BETWEEN = r"(?:(?:could|can|did|does|do|had|has|would|not|never|only|still|just|also|then|" \
           r"suddenly|already|\w+ly)\s+){0,3}"
PERCEIVING = re.compile(rf"^[\s,]*{_BETWEEN}{_PERCEIVING}\b", re.IGNORECASE)
PRONOUN = re.compile(r"(?<![\w'’-])([Hh]e|[Ss]he|I)(?![\w'’-])")
NARRATOR = re.compile(r"\b(?:[Mm]y name (?:is|was)(?: still)? |I, |I am |[Cc]all(?:ed)? me )"
                      r"(?P<name>[A-Z][\w'’-]+(?: [A-Z][\w'’-]+)*)")


@dataclass(frozen=True)
class Mention:
    """One mention of a person: their name as memory holds it, where it stands."""

    name: str
    start: int
    end: int


def _forms(person: Mapping[str, Any]) -> set[str]:
    """The forms a person is named by: the whole name, aliases, first name, surname."""
    name = " ".join(str(person.get("name") or "").split())
    forms = {name, *(" ".join(str(a).split()) for a in person.get("aliases") or [])}
    words = name.split()
    if len(words) > 1:
        forms |= {w for w in (words[0], words[-1])
                  if len(w) > 2 and w.lower() not in PARTICLES and w[0].isupper()}
    return {f for f in forms if f}


def named(people: Iterable[Mapping[str, Any]], text: str, within: str = "") -> list[Mention]:
    """Each mention of one of `people` in `text`, once, in order (module docstring); a
    form two people share names the one whose whole name `within` (the piece `text` is
    part of; else `text`) writes."""
    owners: dict[str, set[str]] = {}
    for person in people:
        name = " ".join(str(person.get("name") or "").split())
        for form in _forms(person) if name else ():
            owners.setdefault(form, set()).add(name)
    if not owners:
        return []
    pattern = re.compile(r"(?<![\w'’-])(" + "|".join(
        re.escape(f) for f in sorted(owners, key=len, reverse=True)) + r")(?![\w-]|['’]\w\w)")
    found = [(m, owners[m.group(1)]) for m in pattern.finditer(text)]
    whole = {m.group(1) for m in pattern.finditer(within)} if within else \
        {m.group(1) for m, _ in found}
    out = []
    for m, names in found:
        if len(names) > 1:
            names = {n for n in names if n in whole}
        if len(names) == 1:
            out.append(Mention(next(iter(names)), m.start(), m.end()))
    return out


def found_dead(people: Iterable[Mapping[str, Any]], text: str) -> set[str]:
    """Who `text` finds dead, lying dead or drowned ("found Tomas Reyne drowned",
    "Reyne lay face down in the water, dead", "the body of Tomas Reyne")."""
    out = set()
    for mention in named(people, text):
        before, after = text[max(0, mention.start - 40):mention.start], text[mention.end:]
        if _BODY_OF.search(before) or _FOUND.search(before) and _FOUND_DEAD.match(after) \
                or _LAY_DEAD.match(after):
            out.add(mention.name)
    return out


_BODY_OF = re.compile(r"\b(?:body|corpse) of\s+$", re.IGNORECASE)
_FOUND = re.compile(r"\b(?:found|finds?|discovered)\s+$", re.IGNORECASE)
_DEAD = r"[\s,]+(?<!the )(?:dead|drowned)\b"
_FOUND_DEAD = re.compile(rf"(?:[\s,]+[\w-]+){{0,2}}?{_DEAD}")
_LAY_DEAD = re.compile(rf"\s+(?:lay|lies|was lying|was found|had been found|floated|was|is)"
                       rf"(?:[\s,]+[\w-]+){{0,5}}?{_DEAD}|\s+(?:had )?drowned\b")


def narrator(people: Iterable[Mapping[str, Any]], text: str, protagonist: str = "") -> str:
    """Whose "I" a first-person piece's narration is: the person it names as its
    narrator ("my name is Clara Marsh", "I, Clara Marsh,"), else the protagonist; "" when
    its narration says "I" under three times."""
    plain = " ".join(p.text for p in dialogue(text) if not p.speech)
    if len(re.findall(r"(?<![\w'’-])(?:I|me|my)(?![\w'’-])", plain)) < 3:
        return ""
    known = list(people)
    for m in NARRATOR.finditer(plain):
        tied = named(known, m.group("name"))
        if tied:
            return tied[0].name
    return protagonist if named(known, protagonist) else ""


def weights(people: Iterable[Mapping[str, Any]], text: str,
            protagonist: str = "") -> dict[str, int]:
    """Each person's weight in `text` (mentions, and PERCEIVES per perceiving), in the
    order the text first names them."""
    known = list(people)
    out: dict[str, int] = {}
    for m in named(known, text):
        out[m.name] = out.get(m.name, 0) + 1
    teller = narrator(known, text, protagonist)
    subject = ""
    for sentence in sentences(text):
        plain = " ".join(p.text for p in dialogue(sentence) if not p.speech)
        subject = _perceivers(known, plain, text, subject, teller, out)
    return out


def _perceivers(people: list[Mapping[str, Any]], plain: str, piece: str, subject: str,
                teller: str, out: dict[str, int]) -> str:
    """Add what the narration `plain` of a sentence of `piece` says each person perceives
    to `out`; the subject a pronoun of the next sentence stands for."""
    events: list[tuple[int, int, str, bool]] = []     # (start, end, who, a pronoun)
    events += [(m.start, m.end, m.name, False) for m in named(people, plain, piece)]
    events += [(m.start(), m.end(), m.group(1), True) for m in PRONOUN.finditer(plain)]
    first = True
    for _start, end, word, pronoun in sorted(events):
        possessive = plain[end:end + 2] in ("'s", "’s")
        who = (teller if word == "I" else subject) if pronoun else word
        if first and not pronoun and not possessive:
            subject = who
        if not possessive:
            first = False
        if who and word == "I":
            out[who] = out.get(who, 0) + 1          # the narrator's "I" is a mention
        if who and PERCEIVING.match(plain[end:]):
            out[who] = out.get(who, 0) + PERCEIVES
    return subject


def guess_pov(people: Iterable[Mapping[str, Any]], text: str, *, dead: Collection[str] = (),
              last_pov: str = "", protagonist: str = "") -> tuple[str, list[str]]:
    """The piece's POV ("" when it names no one living) and everyone it names, the POV
    first, then by weight (see the module docstring)."""
    known = list(people)
    weighed = weights(known, text, protagonist)
    order = list(weighed)
    cast = sorted(order, key=lambda n: (-weighed[n], order.index(n)))
    gone = set(dead) | found_dead(known, text)
    living = [n for n in cast if n not in gone]
    if not living:
        return "", cast
    best = weighed[living[0]]
    tied = [n for n in living if weighed[n] == best]
    pov = last_pov if last_pov in tied else tied[0]
    return pov, [pov, *(n for n in cast if n != pov)]
