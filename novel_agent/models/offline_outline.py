"""The offline model's outline: an arc, acts, chapters and beats drawn from the premise.

Deterministic from the seed and the story. Each call says what it is asked for in
its `job` (the outline prompt's values: `level`, `count`, the chapter's number and
place in the book, and whether it is a rewrite, which gets other titles and lines);
the answers name the protagonist and what the premise turns on ("the drowned
man's map" of "A lighthouse keeper finds a drowned man's map."), and follow the
book's course: the first chapters set the story going, the middle ones complicate
and turn it, the last ones bring it to its end. It gives no tensions: the
outline's curve gives each beat its target.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from typing import Any

OPENING = ["The Discovery", "First Signs", "The Call", "Landfall"]
MIDDLE = ["Deeper Water", "The Cost", "Turning Tides", "The Hidden Door", "Crosscurrents"]
CLOSING = ["The Reckoning", "Last Light", "The Return", "Homeward"]
ADJECTIVES = ["Salt", "Drowned", "Silent", "Broken", "Hidden", "Last", "Cold", "Burning"]  # 8
NOUNS = ["Lantern", "Ledger", "Tide", "Key", "Map", "Bell", "Letter", "Door", "Storm",
         "Harbour", "Archive", "Stranger", "Debt", "Signal", "Compass", "Chapel"]   # 16
ALLIES = ["Tobin Keel", "Ilse Varga", "Corin Ashdown", "Petra Lisle"]
RIVALS = ["Osric Thorne", "Hedda Morrow", "Anselm Brannock", "Calla Fenn"]
PLACES = ["the harbour archive", "the salt market", "the old observatory", "the ferry landing",
          "the river stairs", "the signal tower", "the flooded chapel", "the north road inn"]
# What a chapter does, by where it falls in the book (0 the first chapter, 1 the last).
PHASES = ((0.2, "set the story going"), (0.5, "complicate it"), (0.75, "turn it"),
          (0.99, "bring it to its crisis"), (1.01, "resolve it"))
# Each phase's beats: first the ones that happen once, in order, then ones that may come
# again (at another place, with another person) while the phase lasts.
ONCE = {
    "set the story going": [
        "{hero} finds {thing} at {place} and keeps it.",
        "{ally} tells {hero} what {thing} may mean.",
        "{hero} decides to learn the truth of {thing}."],
    "complicate it": [
        "{rival} comes to {place} asking after {thing}.",
        "{hero} learns that {ally} has kept something back.",
        "A first answer about {thing} raises a harder question."],
    "turn it": [
        "A secret about {thing} comes out at {place}.",
        "{hero} and {ally} quarrel over what to risk.",
        "{rival} takes the upper hand, and {hero} loses ground."],
    "bring it to its crisis": [
        "{hero} goes to {place} to face {rival}.",
        "Everything {hero} has learned about {thing} is put to the test.",
        "{hero} risks what matters most to end it."],
    "resolve it": [
        "The truth of {thing} is told in full.",
        "{hero} pays the price of what {thing} began.",
        "{hero} comes home changed, the last question answered."],
}
AGAIN = {
    "set the story going": [
        "{hero} follows a first lead about {thing} to {place}.",
        "{other} crosses {hero}'s path at {place} and notices {thing}.",
        "A small clue at {place} shows {hero} that {thing} is not what it seems.",
        "{hero} asks the wrong person about {thing}, and is remembered for it.",
        "{other} lets slip a name tied to {thing}.",
        "A night at {place} leaves {hero} sure of one thing and afraid of another."],
    "complicate it": [
        "{other} gives {hero} a reason to doubt what {thing} shows.",
        "At {place}, {hero} finds that someone has been there first.",
        "{hero} trades a favour with {other} for news of {thing}.",
        "A promise {hero} made at {place} comes due.",
        "{other} is seen where no one expected, near {place}.",
        "{hero} keeps {thing} hidden from {other}, and it costs something."],
    "turn it": [
        "What {hero} believed about {thing} proves wrong at {place}.",
        "{other} makes {hero} an offer that would end the search.",
        "{hero} loses something at {place} that cannot be got back.",
        "{other} is shown in a new light, and {hero} must choose a side.",
        "A door at {place} opens onto what {thing} was hiding.",
        "{hero} breaks with the way things were done at {place}."],
    "bring it to its crisis": [
        "{other} forces {hero}'s hand at {place}.",
        "{hero} and {other} run out of time at {place}.",
        "The danger around {thing} reaches {place}, and {hero} must act.",
        "{hero} gathers what is left to make a last stand at {place}.",
        "{other} falls, or nearly falls, for {thing}.",
        "No one can help {hero} now but {other}, at {place}."],
    "resolve it": [
        "{hero} settles what is owed to {other}.",
        "At {place}, {hero} puts {thing} to rest."],
}
PURPOSES = {     # (once, in order; then again while the phase lasts)
    "set the story going": (
        ["{hero} meets {thing}, and the story begins."],
        ["{hero} is drawn further in, and the world around {thing} opens.",
         "A lead takes {hero} to {place}.", "{hero} learns who else cares about {thing}."]),
    "complicate it": (
        ["Someone else wants {thing}: the search is no longer {hero}'s alone."],
        ["An answer costs {hero} an ally's trust.", "The trail leads to {place}, and it is not safe.",
         "{hero}'s plans meet someone else's."]),
    "turn it": (
        ["A secret about {thing} turns the story."],
        ["{hero} loses ground and must choose what to risk.",
         "What was hidden at {place} changes what {hero} wants.",
         "An ally becomes a question, and a rival an answer."]),
    "bring it to its crisis": (
        ["Everything comes to a head at {place}."],
        ["{hero} faces the one who has wanted {thing} all along.", "{hero} risks all to end it.",
         "The last way out closes at {place}."]),
    "resolve it": (
        ["The truth of {thing} is told, and {hero} pays its price."],
        ["What {thing} began is put to rest."]),
}


def outline_answer(seed: int, story: Any, job: Mapping[str, Any]) -> dict[str, Any]:
    """The answer to one outline call (`job`: its level and what it is for)."""
    words = Words(seed, story, again=bool(job.get("rewrite")))
    level, count = str(job.get("level") or "arc"), max(1, int(job.get("count") or 1))
    if level == "arc":
        return {"summary": f"{words.hero} is drawn in where the premise begins: "
                           f"{words.premise} Each answer costs more than the last, until "
                           f"{words.first} must face the truth of {words.thing}.",
                "ending": f"{words.first} faces the truth of {words.thing} and resolves it: "
                          f"the questions it raised are answered, and {words.first} is changed "
                          "by what it cost."}
    if level == "acts":
        return {"acts": [words.act(i, count) for i in range(count)]}
    if level == "chapters":
        numbers = list(job.get("numbers") or range(1, count + 1))
        total = int(job.get("total") or max(numbers))
        return {"chapters": [words.chapter(n, total) for n in numbers[:count]]}
    if level == "revise":
        return {"chapters": words.revision(job)}
    chapter, total = int(job.get("chapter") or 1), int(job.get("total") or 1)
    before = phase_place(chapter, total) * count      # the phase's beats before this chapter's
    return {"beats": [{"what": words.beat(chapter, total, before + k)} for k in range(count)]}


class Words:
    """The names, places and phrases one story's outline is made of."""

    def __init__(self, seed: int, story: Any, *, again: bool = False):
        self.again = again           # a rewrite: other titles, and lines that may come again
        self.rng = random.Random(f"{seed}|outline|{getattr(story, 'name', '')}")
        protagonist = (getattr(story, "protagonist", "") or "").split(",")[0].strip()
        self.hero = protagonist[:60] or "Mara Quill"
        self.first = self.hero.split()[0]
        premise = " ".join(str(getattr(story, "premise", "") or "").split())
        self.premise = (premise[:1].lower() + premise[1:]).rstrip(".") + "." if premise else \
            "a stranger brings trouble to a quiet place."
        self.thing = premise_object(premise) or "what the premise sets in motion"
        self.ally, self.rival = self.rng.choice(ALLIES), self.rng.choice(RIVALS)
        self.places = self.rng.sample(PLACES, len(PLACES))
        self.adjectives = self.rng.sample(ADJECTIVES, len(ADJECTIVES))
        self.nouns = self.rng.sample(NOUNS, len(NOUNS))

    def act(self, i: int, count: int) -> dict[str, str]:
        role = OPENING if i == 0 else CLOSING if i == count - 1 else MIDDLE
        name = role[(i if role is MIDDLE else 0) % len(role)]
        if i == 0:
            summary = (f"{self.hero} comes upon {self.thing} and cannot leave it alone; by the "
                       "act's end there is no going back.")
        elif i == count - 1:
            summary = (f"{self.first} confronts the truth of {self.thing}, and the book ends "
                       "as its arc says.")
        else:
            summary = (f"The search for the truth of {self.thing} draws in {self.ally} and "
                       f"{self.rival}; what {self.first} learns raises the stakes.")
        return {"name": name, "summary": summary}

    def title(self, number: int) -> str:
        """Chapter `number`'s title: no two of the first 128 chapters share one."""
        n = number - 1
        return f"The {self.adjectives[n % 8]} {self.nouns[(n + n // 16) % 16]}"

    def chapter(self, number: int, total: int) -> dict[str, str]:
        phase, n = chapter_phase(number, total), phase_place(number, total)
        once, again = PURPOSES[phase]
        return {"title": self.title(number + 64 * self.again),
                "purpose": self.say(pick(once, again, n + (len(once) + 1) * self.again),
                                    number, n)}

    def beat(self, chapter: int, total: int, k: int) -> str:
        """The `k`th beat (from 0) of the chapters doing what chapter `chapter` of `total` does."""
        phase = chapter_phase(chapter, total)
        k += (len(ONCE[phase]) + 1) * self.again
        return self.say(pick(ONCE[phase], AGAIN[phase], k), chapter, k)

    def revision(self, job: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The chapters of a revision at a checkpoint (`numbers`, each with its count of
        `beats` to write): written anew, the first beat taking up the first new thread."""
        numbers, total = list(job.get("numbers") or []), int(job.get("total") or 1)
        counts, taken = list(job.get("beats") or []), list(job.get("threads") or [])
        # each checkpoint's revision writes other titles and beats than the one before it
        # (which a later one rewrites), or a second revision would give the rest as it was
        shift = int(numbers[0]) if numbers else 0
        chapters = []
        for number, count in zip(numbers, counts):
            before = phase_place(number, total) * count + shift
            beats = [{"what": self.beat(number, total, before + k)} for k in range(count)]
            if taken and beats:
                beats[0] = {"what": f"{self.first} takes up the thread of "
                                    f"{' '.join(str(taken.pop(0)).split()[:24])}."}
            chapters.append({**self.chapter(number, total), "title": self.title(
                number + 64 + shift), "beats": beats})
        return chapters

    def say(self, line: str, chapter: int, k: int) -> str:
        text = line.format(hero=self.first, ally=self.ally, rival=self.rival, thing=self.thing,
                           other=(self.ally, self.rival)[k % 2],
                           place=self.places[(chapter + k) % len(self.places)])
        return text[:1].upper() + text[1:]


def pick(once: list[str], again: list[str], k: int) -> str:
    """The `k`th line (from 0): the ones that happen once first, then the others in turn."""
    return once[k] if k < len(once) else again[(k - len(once)) % len(again)]


def chapter_phase(number: int, total: int) -> str:
    """What chapter `number` of `total` does for the story (PHASES): the last resolves it."""
    share = (number - 1) / max(1, total - 1)
    return next(phase for bound, phase in PHASES if share < bound)


def phase_place(number: int, total: int) -> int:
    """How many chapters before chapter `number` do what it does (0: it is the first)."""
    phase = chapter_phase(number, total)
    return sum(chapter_phase(n, total) == phase for n in range(1, number))


ARTICLES = {"a", "an", "the"}
STOPS = {"to", "of", "in", "at", "on", "for", "with", "from", "and", "but", "or", "that", "who",
         "which", "before", "after", "while", "when", "into", "by", "as"}


def premise_object(premise: str) -> str:
    """What the premise turns on: the noun phrase after its subject, with "the" ("the
    drowned man's map" of "A lighthouse keeper finds a drowned man's map."); "" when
    it has none."""
    sentence = re.split(r"(?<=[.!?])\s", premise.strip(), maxsplit=1)[0]
    words = re.findall(r"[\w'’-]+|[^\w\s]", sentence)
    starts = [i for i, w in enumerate(words) if w.lower() in ARTICLES and i > 0]
    if not starts:
        return ""
    phrase = []
    for word in words[starts[0] + 1:starts[0] + 5]:
        if word.lower() in STOPS or word.lower() in ARTICLES or not re.match(r"\w", word):
            break
        phrase.append(word)
    return f"the {' '.join(phrase)}" if phrase else ""
