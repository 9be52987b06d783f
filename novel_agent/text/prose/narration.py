"""Who tells the story and when: the narration's person and tense, guessed from its words.

Both read the narration only (split.narration: what stands outside quotes), since a
third-person book's characters say "I" and speak in the present.

`person`: first-person narration is full of I, me, my, we; second-person of you; third
of he, she, they. The guess counts the three (first person's words weigh double, for
a first-person narrator still says "he" and "she" of everyone else) and takes first
when its weighted count is at least a third of all, else second when "you" is at least
a third, else third.

`tense`: past verb forms (was, were, had, did, said and the other common irregular
pasts, and "-ed" words that no auxiliary comes before, "had opened" counting once, by
"had") against present ones (is, are, am, has, does, says…, a pronoun's "-s" verb: "she
walks", and a plain verb after I, you, we, they: "I walk"). The larger wins.

Each comes with a confidence in [0, 1]: how far the winner's share stands from the
line it had to cross, scaled down when there is little evidence (under 20 pronouns or
verbs, by n/20). A text with no evidence at all is third person, past, at confidence 0.
Heuristics, tuned for English fiction; pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from novel_agent.text.prose.split import narration, words

FIRST = frozenset("i me my mine myself we us our ours ourselves".split())
SECOND = frozenset("you your yours yourself yourselves".split())
THIRD = frozenset("he him his himself she her hers herself they them their theirs "
                  "themselves".split())
EVIDENCE = 20          # pronouns or verbs from which a guess is trusted fully

PAST_FORMS = frozenset("""was were had did said went came saw took made knew thought felt told
found gave stood sat left began ran got heard kept held brought turned seemed looked
could would wrote spoke rose fell lay led let met paid put read sent set shook slept
spent struck swung threw tore understood woke wore won drew drove ate fought flew forgot
froze grew hid hung hurt knelt laid leapt lit lost meant caught chose crept dealt dug
bent bit bled blew broke built burst bought clung sank sang slid smelt snuck sought
stole stuck stung strode swore swept swam taught became""".split()) - {"could", "would",
                                                                       "read", "put",
                                                                       "let", "set", "hurt",
                                                                       "burst", "cast"}
PRESENT_FORMS = frozenset("""is are am has does says goes comes sees takes makes knows thinks
feels tells finds gives stands sits leaves begins runs gets hears keeps holds brings turns
seems looks writes speaks rises falls lies leads meets pays sends shakes sleeps spends
strikes throws tears understands wakes wears draws drives eats fights flies forgets grows
hides hangs kneels lights loses means catches chooses creeps breaks builds buys sinks
sings slides steals sticks swears sweeps teaches becomes wants needs tries asks moves
walks waits watches reaches smiles nods opens closes pulls pushes steps stares pauses
whispers laughs calls starts stops""".split())
BASE_VERBS = frozenset("""go come see take make know think feel tell find give stand sit leave
begin run get hear keep hold bring turn seem look write speak rise fall lie lead meet pay
send shake sleep spend strike throw tear understand wake wear draw drive eat fight fly
forget grow hide hang kneel light lose mean catch choose creep break build buy sink sing
slide steal stick swear sweep teach become want need try ask move walk wait watch reach
smile nod open close pull push step stare pause whisper laugh call start stop say do have
am remember love hate hope wonder wish believe""".split())
_AUX = frozenset("is are am was were be been being has have had having get gets got "
                 "getting".split())
_SUBJECT_PLAIN = frozenset("i you we they".split())
_SUBJECT_S = frozenset("he she it".split())
_ADVERBS = frozenset("never always still just only also then now almost already often "
                     "slowly quickly suddenly finally simply really".split())
_NOT_PAST_ED = frozenset("""need bed red shed seed feed speed weed breed bleed deed freed hundred
sacred naked wicked ragged rugged jagged kindred wretched beloved""".split())


class Guess(NamedTuple):
    """A guessed label ("first", "past", …) and how sure the guess is, 0 to 1."""

    value: str
    confidence: float


def _confidence(share: float, line: float, n: int) -> float:
    """How far `share` stands past `line`, as a fraction of the room on its side,
    scaled by the evidence `n`."""
    room = (1 - line) if share >= line else line
    return round(min(1.0, abs(share - line) / room) * min(1.0, n / EVIDENCE), 2)


def person(text: str) -> Guess:
    """The narration's grammatical person: first, second or third.

    >>> person("I walk to the door. “You are late,” he says.").value
    'first'
    """
    return person_of(words(narration(text)))


def person_of(narrated: Sequence[str]) -> Guess:
    """`person` of the narration's words."""
    ws = [w.lower() for w in narrated]
    first = 2 * sum(w in FIRST for w in ws)
    second = sum(w in SECOND for w in ws)
    third = sum(w in THIRD for w in ws)
    total = first + second + third
    if not total:
        return Guess("third", 0.0)
    line = 1 / 3
    if first / total >= line:
        return Guess("first", _confidence(first / total, line, total))
    if second / total >= line:
        return Guess("second", _confidence(second / total, line, total))
    return Guess("third", _confidence(max(first, second) / total, line, total))


def verb_counts(narrated: Sequence[str]) -> tuple[int, int]:
    """(past, present) verb forms counted in the narration's words."""
    ws = [w.lower() for w in narrated]
    past = present = 0
    for i, w in enumerate(ws):
        before = ws[i - 1] if i else ""
        subject = ws[i - 2] if before in _ADVERBS and i > 1 else before
        if w in PAST_FORMS:
            past += 1
        elif w in PRESENT_FORMS:
            present += 1
        elif (w.endswith("ed") and len(w) > 4 and w not in _NOT_PAST_ED
              and before not in _AUX and subject not in _AUX):
            past += 1
        elif subject in _SUBJECT_PLAIN and w in BASE_VERBS:
            present += 1
        elif subject in _SUBJECT_S and w.endswith("s") and w[:-1] in BASE_VERBS:
            present += 1
    return past, present


def tense(text: str) -> Guess:
    """The narration's tense: past or present.

    >>> tense("She walked to the door. “I am here,” she said.").value
    'past'
    """
    return tense_of(words(narration(text)))


def tense_of(narrated: Sequence[str]) -> Guess:
    """`tense` of the narration's words."""
    past, present = verb_counts(narrated)
    total = past + present
    if not total:
        return Guess("past", 0.0)
    if present > past:
        return Guess("present", _confidence(present / total, 0.5, total))
    return Guess("past", _confidence(past / total, 0.5, total))
