"""A careful reader of an imported manuscript: the offline model whose extractor reads
a piece of ordinary prose, sentence by sentence, as a careful model would, and fills
in the continuity audit's keys (tests/audit/vintage.md is written for it).

People are named as a novel names them: a full name ("Clara Marsh"), a first name, a
surname alone, or a title and a surname ("Mr. Aubrey", "Inspector Dunmore"). They are
the characters the request's memory knows (as a model reads them from its prompt) and
the full names the piece writes, and the reader answers with the full name, as a model
told the known characters does; a form two people share names the one whose full name
the piece writes, else no one. A first-person piece's "I" is the person it names in
"my name is NAME". It reads (NAME: a person, PLACE: "the Long Cellar", capitalized;
THING: "the brass key"):

    NAME VERBed ..., said NAME          present (in person)
    a sentence of a dream or a memory   its subject present, the others it names recalled
    found NAME drowned|dead in PLACE    status dead (and not present)
    NAME was|stood|sat at|in|on PLACE   where              NAME went|came|... to PLACE   travel
    NAME came up from PLACE             travel             NAME hid THING behind|under ...  a fact
    NAME took THING (back) from ...     items: gains       NAME lost|dropped THING       loses
    NAME gave THING to NAME             gives              NAME used|lit THING, unlocked ... with THING   uses
    NAME told NAME that FACT            told               NAME knew (that) FACT         knows
    NAME wondered who|what ...          a loop             NAME knew now|learned who ... that loop resolved
    NAME's eyes were COLOUR, NAME's COLOUR eyes            appearance: eye colour
    the first sentence (not a memory) that states a time  the clock, as a model writes it:
        "Monday 14 October 1935, morning", "the next day, Thursday", "ten minutes later",
        "Friday 18 October, 21:00"

The voice cards asked for (the scene's people who speak and have none) hold the
phrases of three words or more a speaker says in two of their lines. The summary is
the prose's first sentences. What it answers depends on the prose and the characters
memory knows, never on the plan.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Mapping
from typing import Any

from novel_agent.models.base import Request
from novel_agent.models.offline import _asked
from novel_agent.story.memory.voices import people_forms
from novel_agent.text.names import not_a_name, written_name
from novel_agent.text.speakers import lines
from tests.support.reading_model import ReadingModel

TITLE = r"(?:(?:Mr|Mrs|Miss|Dr)\.|Inspector|Father)"
FORM = rf"(?:{TITLE} )?[A-Z][a-z]+(?:[ -][A-Z][a-z]+)*"
PLACE = r"(?:the )?[A-Z][a-z]+(?:[ -][A-Z][a-z]+)*"
THING = r"the ([a-z]+(?: [a-z]+)?)"
VERBS = set("""was had came went stood sat took gave knew saw felt thought said found lay ran
drove rode brought kept held told hid looked heard leaned did got put made set let spat
understood wondered watched""".split())
MEMORY = re.compile(r"\b(?:dream\w*|remember\w*|recall\w*)\b", re.I)
WEEKDAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()
MONTHS = ("January February March April May June July August September October November "
          "December").split()
NUMBERS = {w: i for i, w in enumerate("zero one two three four five six seven eight nine ten "
                                      "eleven twelve".split())}
RELATIVE = re.compile(r"\b(the next (?:day|morning|evening|night)|that (?:same )?(?:morning|"
                      r"afternoon|evening|night)|(?:\w+) (?:minutes|hours|days) later)\b", re.I)
DATE = re.compile(rf"\b(?:({'|'.join(WEEKDAYS)}) )?(\d{{1,2}} (?:{'|'.join(MONTHS)})(?: \d{{4}})?)")
WEEKDAY = re.compile(rf"\b({'|'.join(WEEKDAYS)})\b")
HOUR = re.compile(r"\b(\w+) o'clock\b")
PARTS = ("dawn", "dusk", "noon", "midnight", "morning", "afternoon", "evening", "night")
SPEECH = re.compile(r"\"[^\"]*\"")


class People:
    """Who a form names: the known characters and the full names the piece writes."""

    def __init__(self, known: Iterable[str], prose: str):
        written = {re.sub(rf"^{TITLE} ", "", m) for m in re.findall(FORM, prose)}
        self.written = {n for n in written if len(n.split()) > 1 and written_name(n, prose)
                        and not not_a_name(n.split()[0]) and
                        not re.search(rf"\bthe {re.escape(n)}\b", prose, re.I) and
                        re.search(rf"said {re.escape(n)}\b|\b{re.escape(n)}(?:, [^,]+,)? "
                                  rf"(?:{'|'.join(VERBS)}|[a-z]+ed)\b", prose)}
        self.names = list(dict.fromkeys([*known, *sorted(self.written)]))
        forms = {f for n in self.names for f in (n, *n.split(), *(f"{t} {n.split()[-1]}" for t in
                                                                 ("Mr.", "Mrs.", "Miss", "Inspector")))}
        self.form = "(" + "|".join(re.escape(f) for f in sorted(
            (f for f in forms if self.who(f)), key=len, reverse=True)) + ")"

    def who(self, form: str) -> str | None:
        """The full name `form` names ("Then Clara": its last words), or None."""
        words = form.split()
        return next(filter(None, (self._who(" ".join(words[i:])) for i in range(len(words)))),
                    None)

    def _who(self, form: str) -> str | None:
        if form in self.names:
            return form
        titled = re.match(rf"{TITLE} (\w+)$", form)
        word = titled.group(1) if titled else form
        if " " in word:
            return None
        by_first = [n for n in self.names if not titled and n.split()[0] == word]
        by_last = [n for n in self.names if len(n.split()) > 1 and n.split()[-1] == word]
        for found in (by_first, by_last):
            if len(found) == 1:
                return found[0]
            written = [n for n in found if n in self.written]
            if len(written) == 1:
                return written[0]
        return None

    def named(self, text: str) -> list[tuple[str, int, int]]:
        """(full name, start, end) of each person `text` names, in order."""
        out = []
        for m in re.finditer(FORM, text):
            full = self.who(m.group(0))
            if full and not re.search(r"\bthe $", text[:m.start()], re.I):
                out.append((full, m.start(), m.end()))
        return out


def sentences_of(prose: str) -> list[str]:
    """The sentences of `prose` ("Mr. Aubrey" within one)."""
    ends = r"(?:(?<=[.!?])|(?<=[.!?]\"))(?<!Mr\.)(?<!Mrs\.)(?<!Dr\.)\s+(?=[A-Z\"])"
    return [s for s in re.split(ends, " ".join(prose.split())) if s]


def read_piece(prose: str, known: Iterable[str]) -> dict[str, Any]:
    """The extraction's keys (without the summary and the voices) a careful reader
    gives for `prose` (see the module docstring)."""
    people = People(known, prose)
    out: dict[str, Any] = {k: [] for k in ("facts", "characters", "loops_opened",
                                           "loops_resolved", "relationships", "present",
                                           "recalled", "status", "where", "travel", "items",
                                           "told", "knows", "appearance")}
    out["clock"] = ""
    narrator = next((people.who(m) for m in re.findall(rf"\b[Mm]y name (?:is|was)(?: still)? "
                                                       rf"({FORM})", prose)), None)
    dead: set[str] = set()
    for sentence in sentences_of(prose):
        _read(sentence, people, narrator, out, dead)
    out["present"] = [n for n in dict.fromkeys(out["present"]) if n not in dead]
    out["recalled"] = [n for n in dict.fromkeys(out["recalled"]) if n not in out["present"]]
    out["travel"] = list(dict.fromkeys(out["travel"]))
    out["characters"] = [{"name": n, "state": "seen in the scene"} for n in out["present"]]
    return out


def _read(sentence: str, people: People, narrator: str | None, out: dict[str, Any],
          dead: set[str]) -> None:
    narration = SPEECH.sub(" ", sentence)
    named = people.named(narration)
    names = [n for n, _, _ in named]
    subject = names[0] if named and named[0][1] < 20 else None
    if narrator and re.match(r"\s*I\b", narration):
        subject = narrator
    if MEMORY.search(narration):           # a dream or a memory: only its subject is here
        out["present"] += [subject] if subject else []
        out["recalled"] += [n for n in names if n != subject]
        return
    if not out["clock"]:
        out["clock"] = clock_of(narration)
    if narrator:
        narration = re.sub(r"^I\b", narrator, narration.strip())
    said = [people.who(m) for m in re.findall(rf"said ({FORM})", sentence)]
    out["present"] += [n for n in said if n]
    for full, _start, end in named:
        rest = narration[end:]
        if re.match(rf"(?:, [^,]+,)? (?!was not\b)(?:{'|'.join(VERBS)}|[a-z]+ed)\b", rest):
            out["present"].append(full)
    _events(narration, people, out, dead)


def _form(people: People, text: str) -> str:
    return people.who(text) or text


def _events(n: str, people: People, out: dict[str, Any], dead: set[str]) -> None:
    """The sentence's events (see the module docstring)."""
    f = rf"\b{people.form}\b"
    if m := re.search(rf"found {f} (drowned|dead)(?: (in|at|on) ({PLACE}))?", n):
        who = _form(people, m.group(1))
        how = " ".join(x for x in m.groups()[1:] if x)
        out["status"].append({"name": who, "status": "dead", "how": how})
        dead.add(who)
    if m := re.search(rf"{f} (?:knew now|learned|found out) (who|what|why|where|how) ([^,.]+)", n):
        out["loops_resolved"].append(question(m.group(2), m.group(3)))
    elif m := re.search(rf"{f} wondered (who|what|why|where|how) ([^,.]+)", n):
        out["loops_opened"].append(question(m.group(2), m.group(3)))
    elif m := re.search(rf"{f} knew(?: then| now)?(?: that)? (the [^,.]+)", n):
        out["knows"].append({"name": _form(people, m.group(1)), "fact": m.group(2)})
    if m := re.search(rf"{f} told {f} that ([^,.]+)", n):
        out["told"].append({"to": _form(people, m.group(2)), "fact": m.group(3)})
    if m := re.search(rf"{f} hid (the [a-z ]+?) ((?:behind|under|beneath|inside) the [a-z ]+)", n):
        thing = m.group(2)
        out["facts"].append(f"{thing[0].upper()}{thing[1:]} was hidden {m.group(3)} by "
                            f"{_form(people, m.group(1))}")
    if m := re.search(rf"{f} (?:was|stood|sat|waited) (?:at|in|on) ({PLACE})", n):
        out["where"].append({"name": _form(people, m.group(1)), "place": m.group(2)})
    if m := re.search(rf"{f} (?:went|walked|came|drove|rode|hurried|ran|climbed|returned)"
                      rf"(?: (?:down|up|back|over|out))? (?:to|into) ({PLACE})", n):
        who = _form(people, m.group(1))
        out["travel"].append(who)
        out["where"].append({"name": who, "place": m.group(2)})
    elif m := re.search(rf"{f} came up from ({PLACE})", n):
        out["travel"].append(_form(people, m.group(1)))
    _items(n, people, out)
    if m := re.search(rf"{f}'s (?:eyes were ([a-z-]+)|([a-z]+(?:-[a-z]+)?) eyes)", n):
        out["appearance"].append({"name": _form(people, m.group(1)), "feature": "eye colour",
                                  "value": m.group(2) or m.group(3)})


def question(word: str, clause: str) -> str:
    """The open question "NAME wondered WORD CLAUSE" raises, in the reader's own words (not
    the sentence's: "who had opened that sluice gate")."""
    return f"{word.capitalize()} {clause.replace(' the ', ' that ', 1)}?"


def _items(n: str, people: People, out: dict[str, Any]) -> None:
    f = rf"\b{people.form}\b"
    for pattern, event in ((rf"{f} (?:took|picked up) {THING}(?: back)? from", "gains"),
                           (rf"{f} (?:lost|dropped) {THING}", "loses"),
                           (rf"{f} (?:used|lit) {THING}", "uses"),
                           (rf"{f} unlocked the [a-z]+ with {THING}", "uses")):
        if m := re.search(pattern, n):
            out["items"].append({"name": _form(people, m.group(1)), "item": m.group(2),
                                 "event": event})
    if m := re.search(rf"{f} gave {THING} to {f}", n):
        out["items"].append({"name": _form(people, m.group(1)), "item": m.group(2),
                             "event": "gives", "to": _form(people, m.group(3))})


def clock_of(sentence: str) -> str:
    """The time `sentence` states, as a model writes it in the extraction's clock ("" when
    it states none)."""
    parts = []
    if m := RELATIVE.search(sentence):
        parts.append(m.group(1)[0].lower() + m.group(1)[1:])
    if m := DATE.search(sentence):
        parts.append(" ".join(x for x in m.groups() if x))
    elif m := WEEKDAY.search(sentence):
        parts.append(m.group(1))
    if m := HOUR.search(sentence):
        hour = NUMBERS.get(m.group(1).lower(), 0)
        late = re.search(r"\b(?:night|evening|afternoon)\b", sentence)
        parts.append(f"{hour % 12 + (12 if late else 0):02d}:00")
    elif parts and not RELATIVE.search(sentence):     # a date's part of the day
        parts += [p for p in PARTS if re.search(rf"\b{p}\b", sentence)][:1]
    return ", ".join(parts)


def voice_cards(prose: str, characters: Iterable[Mapping[str, Any]], asked: list[str],
                most: int) -> list[dict[str, Any]]:
    """Cards for the `asked` people: the phrases of 3+ words each says in two lines."""
    chars = [c for c in characters if c.get("name") in asked]
    said: dict[str, list[str]] = {}
    for line in lines(prose, people_forms(chars)):
        if line.speaker is not None:
            said.setdefault(line.speaker, []).append(line.text.lower())
    out = []
    for c in chars:
        mine = said.get(str(c.get("id")), [])
        grams = [set(_grams(text)) for text in mine]
        tics = sorted({g for i, a in enumerate(grams) for b in grams[i + 1:] for g in a & b},
                      key=len, reverse=True)[:1]
        if tics:
            out.append({"name": c["name"], "diction": "plain, of the vineyard",
                        "habits": "short sayings, said again",
                        "tics": [f'"{t}"' for t in tics], "never": []})
    return out[:most]


def _grams(text: str, n: int = 3) -> list[str]:
    words = re.findall(r"[a-z']+", text)
    return [" ".join(words[i:i + n]) for i in range(len(words) - n + 1)]


class ManuscriptReader(ReadingModel):
    """The offline model whose extractor reads an imported piece (the module docstring)."""

    def describe(self) -> str:
        return f"manuscript reader (offline, seed {self.seed}): the extractor reads the prose"

    def _extract(self, rng: random.Random, hints: Mapping[str, Any]) -> dict:
        prose = str(hints.get("prose", ""))
        memory = hints.get("memory")
        chars = list(memory.characters.values()) if memory is not None else []
        answer = read_piece(prose, [str(c.get("name")) for c in chars])
        sentences = [s for s in sentences_of(prose) if len(s.split()) > 4]
        answer["summary"] = [f"The scene tells how {s[0].lower()}{s[1:]}"
                             for s in sentences[:3]] or ["The story moves on here."]
        return answer

    def _voices(self, rng: random.Random, request: Request, hints: Mapping[str, Any]) -> dict:
        asked = _asked(request, "voices")
        if not asked:
            return {}
        memory, plan = hints.get("memory"), hints.get("plan")
        chars = [c for c in (memory.characters.values() if memory is not None else [])
                 if not c.get("voice")]
        names = [n for n in [getattr(plan, "pov", ""), *getattr(plan, "characters", [])] if n]
        return {"voices": voice_cards(str(hints.get("prose", "")), chars, names,
                                      int(asked.get("maxItems", 1)))}
