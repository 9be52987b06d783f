"""What the model answers when it makes an outline, level by level: the JSON schema of
each answer and its validation.

Four levels, one schema each: the arc (its summary and ending), the acts (name and
summary), one act's chapters (title and purpose), one chapter's beats (what happens,
and a target tension the model may leave out). Each schema asks for exactly the
number wanted and bounds its strings (`maxLength`: a small model under a grammar
otherwise rambles; what it cut off is made whole, `whole`). `*_from_json` turn a
parsed answer into parts or raise ModelResponseError listing every problem, which the
caller sends back once as a repair request; told the parts already made (`taken`), a
chapter or a beat that repeats one is a problem too (`repeats`: the 1.5B wrote a
book's last chapter as a copy of its second, title, purpose and beats). Pure.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from novel_agent.errors import ModelResponseError
from novel_agent.story.outline.file import Arc
from novel_agent.text.cleanup import copied_sentences, sentences
from novel_agent.text.names import cut_off

LEVELS = ("arc", "acts", "chapters", "beats")
STAGE = "outline"      # the usage ledger's stage of every outline call


def _text(n: int, least: int = 1) -> dict[str, Any]:
    return {"type": "string", "minLength": least, "maxLength": n}


FIELDS: dict[str, dict[str, dict[str, Any]]] = {
    "acts": {"name": _text(60), "summary": _text(300, 12)},
    "chapters": {"title": _text(60), "purpose": _text(200, 12)},
    "beats": {"what": _text(200, 8), "tension": {"type": "integer", "minimum": 0, "maximum": 10}},
}
ARC_FIELDS = {"summary": _text(400, 12), "ending": _text(300, 12)}
# Asked of a small model first, so that its ending answers something: the question the
# premise leaves open (an embedded 1.5B's endings answered none: "she goes on keeping the
# light"). The outline keeps it beside the ending that answers it (the arc's `question`).
QUESTION_FIELD = {"question": _text(200, 8)}


def schema(level: str, count: int = 1, *, question: bool = False) -> dict[str, Any]:
    """The JSON schema of a `level` answer holding `count` items (the arc: one of it; with
    `question`, the premise's open question first)."""
    if level == "arc":
        fields = {**QUESTION_FIELD, **ARC_FIELDS} if question else ARC_FIELDS
        return {"type": "object", "properties": fields, "required": list(fields)}
    fields = FIELDS[level]
    required = [k for k in fields if k != "tension"]     # the curve gives a tension left out
    return {"type": "object", "required": [level], "properties": {level: {
        "type": "array", "minItems": count, "maxItems": count,
        "items": {"type": "object", "properties": fields, "required": required}}}}


def arc_from_json(data: dict[str, Any], *, strict: bool = True) -> Arc:
    """The arc of an answer (its question too, when it gives one), or ModelResponseError
    naming what is wrong; `strict`, a field that begins mid-word is wrong too (`begins_cut`:
    asked again once; after that it stands, and the caller says so)."""
    problems = [f"'{key}' must be text" for key in ARC_FIELDS if not _said(data.get(key))]
    keys = ("question", *ARC_FIELDS) if _said(data.get("question")) else tuple(ARC_FIELDS)
    if strict and not problems:
        problems = [f"'{key}' begins in the middle of a word ({str(data[key])[:40]!r}): write "
                    f"it whole, from its first word" for key in keys if begins_cut(data[key])]
    if problems:
        raise ModelResponseError(f"{STAGE}: the arc answer is unusable: {'; '.join(problems)}",
                                 stage=STAGE, raw=str(data)[:2000])
    question = whole("question", data["question"], "arc") if "question" in keys else ""
    return Arc(whole("summary", data["summary"], "arc"), whole("ending", data["ending"], "arc"),
               question=question)


def begins_cut(text: Any) -> bool:
    """Whether `text` begins in the middle of a word: a lower-case letter first. The 1.5B
    ran its summary into the length limit at "…she resolve", and the ending went on from
    there: "s the mystery and sets the stage…", which the last scene's prompt then quoted.

    >>> begins_cut("s the mystery and sets the stage."), begins_cut("Ines frees them.")
    (True, False)
    """
    said = str(text).lstrip(" \"'“‘(")
    return bool(said) and said[0].isalpha() and said[0].islower()


def items_from_json(level: str, data: dict[str, Any], count: int,
                    taken: Sequence[Mapping[str, Any]] | None = None, *,
                    protagonist: str | None = None) -> list[dict[str, Any]]:
    """The `count` items of an acts, chapters or beats answer, each a mapping of its fields
    (text cleaned; a beat's tension a whole number 0-10, or None when missing or not a
    number); more than `count` are cut to it; ModelResponseError names every problem,
    and with `taken` (the level's parts already made) a repeat of one of them or of
    another item (`repeats`); with `protagonist` (the story's line on them, or ""), a
    chapter's title that is no title (`title_problem`)."""
    items, problems = data.get(level), []
    if not isinstance(items, list):
        raise ModelResponseError(f"{STAGE}: the answer needs a list '{level}'", stage=STAGE,
                                 raw=str(data)[:2000])
    if len(items) < count:
        problems.append(f"{count} {level} were asked for, {len(items)} given")
    out = []
    for number, item in enumerate(items[:count], 1):
        if not isinstance(item, dict):
            problems.append(f"{level} {number} must be an object")
            continue
        missing = [k for k in FIELDS[level] if k != "tension" and not _said(item.get(k))]
        problems += [f"{level} {number}: '{k}' must be text" for k in missing]
        said = {k: whole(k, item[k], level) for k in FIELDS[level]
                if k != "tension" and k not in missing}
        out.append(said | (beat_said(said.get("what", ""), item.get("tension"))
                           if level == "beats" else {}))
    if not problems and level == "chapters" and protagonist is not None:
        problems = [f"chapters {number}: its title {item['title'][:50]!r} {why}"
                    for number, item in enumerate(out, 1)
                    if (why := title_problem(item["title"], protagonist))]
    if not problems and taken is not None:
        problems = repeats(level, out, taken)
    if problems:
        raise ModelResponseError(f"{STAGE}: the {level} answer is unusable: "
                                 f"{'; '.join(problems[:6])}", stage=STAGE, raw=str(data)[:2000])
    return out


TITLE_MOST = 8      # words: a chapter's title longer than this is a description
_DESCRIBED = re.compile(r"^[^,]{2,40},\s+(?:an?|aged)\s+\S+|\b\w+-years?-old\b", re.IGNORECASE)


def title_problem(title: str, protagonist: str = "") -> str | None:
    """Why `title` is not a chapter's title (None if it is one): more than TITLE_MOST words,
    the protagonist's description (`protagonist`, the story's line on them), or a
    description of someone (a name, then who they are). The 1.5B titled chapters
    "Ines Karr, a nineteen-year-old apprentice glassblower".

    >>> title_problem("Ines Karr, a nineteen-year-old apprentice glassblower")
    'describes someone: a title is a few words naming what the chapter is about'
    >>> title_problem("The Glass Apples") is None
    True
    """
    words = title.split()
    if len(words) > TITLE_MOST:
        return f"is {len(words)} words: a title is at most {TITLE_MOST}"
    said = " ".join(re.findall(r"[\w'-]+", title.casefold()))
    if protagonist and len(words) >= 3 and said in " ".join(re.findall(r"[\w'-]+",
                                                                      protagonist.casefold())):
        return "is the protagonist's description: a title names what the chapter is about"
    if _DESCRIBED.search(title):
        return "describes someone: a title is a few words naming what the chapter is about"
    return None


def short_title(what: str) -> str:
    """A short title made of a beat's `what` (for a chapter whose title was no title
    after a repair): its first words, up to a comma, without the small words at the end.

    >>> short_title("Ines finds the crack in the cave wall, and the ball.")
    'Ines finds the crack'
    """
    words = re.split(r"[,;:.!?]", " ".join(what.split()), maxsplit=1)[0].split()[:TITLE_WORDS]
    while len(words) > 1 and words[-1].lower() in SMALL_WORDS:
        words.pop()
    return " ".join(words)


REPEATED = {"acts": ("name",), "chapters": ("title", "purpose"), "beats": ("what",)}


def repeats(level: str, items: Sequence[Mapping[str, Any]],
            taken: Sequence[Mapping[str, Any]] = ()) -> list[str]:
    """What of `items` repeats a part of `taken` or an item before it: a field the same
    (case and spacing aside), or a sentence field a near-copy (most of its three-word
    runs already said: text.cleanup.copied_sentences)."""
    problems: list[str] = []
    before = [dict(t) for t in taken]
    for number, item in enumerate(items, 1):
        for key in REPEATED[level]:
            said = str(item.get(key) or "")
            others = [str(t.get(key) or "") for t in before if t.get(key)]
            same = " ".join(said.casefold().split()) in {" ".join(o.casefold().split())
                                                         for o in others}
            if key not in ("name", "title") and others and not same:
                same = bool(copied_sentences([said], "\n".join(others)))
            if same:
                problems.append(f"{level} {number}: its {key} repeats an earlier one "
                                f"({said[:50]!r}): write a new one, different from the rest")
        before.append(dict(item))
    return problems


_SAID_TENSION = re.compile(r"\s*\(tension:? (\d+)\)\s*\.?\s*$", re.IGNORECASE)


def beat_said(what: str, given: Any) -> dict[str, Any]:
    """A beat's {what, tension}, a "(tension 4)" the model wrote at the end of its text (the
    prompt's own way of showing a beat, copied by the 1.5B) taken off it, and taken as its
    tension when it gave none.

    >>> beat_said("Edda finds the map. (tension 4)", None)
    {'what': 'Edda finds the map.', 'tension': 4}
    """
    found = _SAID_TENSION.search(what)
    if found and what[:found.start()].strip():
        said = tension(given)
        return {"what": what[:found.start()].strip(),
                "tension": said if said is not None else tension(found.group(1))}
    return {"what": what, "tension": tension(given)}


def tension(value: Any) -> int | None:
    """A tension as a whole number from 0 to 10 (clamped), or None when it is not a number."""
    if isinstance(value, str) and value.strip().replace(".", "", 1).isdigit():
        value = float(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return min(10, max(0, round(value)))


def _said(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


# (level, field) -> its length limit: an act's summary is cut at 300, the arc's at 400
LIMITS = {(level, key): spec["maxLength"]
          for level, fields in (*FIELDS.items(), ("arc", {**QUESTION_FIELD, **ARC_FIELDS}))
          for key, spec in fields.items() if "maxLength" in spec}
TITLE_WORDS = 6           # a title cut off at its length limit keeps this many words at most
SMALL_WORDS = {"a", "an", "the", "of", "from", "to", "and", "or", "in", "at", "on", "with"}


def whole(key: str, value: str, level: str = "") -> str:
    """`value` of field `key` (of `level`: its limit; else the field's shortest), its
    spaces tidied, and whole when the model ran into the field's length limit (a small
    model under a grammar does): a sentence field keeps its complete sentences (one
    sentence, its whole clauses), a title its first words ("Act I: The lighthouse
    keeper receives a distress call from a" is "Act I: The lighthouse keeper receives")."""
    text = " ".join(value.split())
    limit = LIMITS.get((level, key)) or min((n for (_, k), n in LIMITS.items() if k == key),
                                             default=10_000)
    if not cut_off(text, limit):
        return text
    if key in ("title", "name"):
        words = text.split()[:TITLE_WORDS]
        while len(words) > 1 and words[-1].lower() in SMALL_WORDS:
            words.pop()
        return " ".join(words).rstrip(",;:—-")
    complete = [s for s in sentences(text) if not cut_off(s, 0)]
    if complete:
        return " ".join(complete)
    # one sentence, cut: it ends at its last whole clause ("…her love for her, leading to a
    # revelation of the island's古老" ends at "her"), when that keeps half of it
    clause = text.rsplit(",", 1)[0].rstrip() if "," in text else ""
    return clause + "." if len(clause) >= len(text) // 2 else text
