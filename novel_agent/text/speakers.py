"""Who says each line of a scene's dialogue, guessed from the narration around it.

A line of dialogue is what stands between quotes (text.prose.split.dialogue). Its
speaker is the one person the narration names right after it ('"Go," Mara said') or,
when it names none there, right before it ('Tobin turned. "Go."'), within REACH words;
when neither names anyone, the one person the paragraph's narration names. Two people
named where the speaker is looked for, or none (a line said by "she"), leave the line
unattributed rather than guessed. People are named by any of their forms: the
whole name, its first word, an alias; a form two people share names neither. Cheap,
lexical, for the checks that need a speaker (audit/voices.py, the extractor's voice
cards); pure.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import NamedTuple

from novel_agent.text.prose import dialogue, paragraphs, words

REACH = 6       # words of narration next to a line that may name its speaker


class Line(NamedTuple):
    """One line of dialogue and who says it (a person's key; None: not known)."""

    text: str
    speaker: str | None


def forms(people: Mapping[str, Iterable[str]]) -> dict[str, str]:
    """Each word form that names one person (lower-cased; "mara", "mara quill") -> their
    key; `people` maps a key to the names it goes by. A form two people share is dropped;
    so are forms of under three letters."""
    found: dict[str, set[str]] = {}
    for key, names in people.items():
        for name in names:
            parts = words(name)
            for form in {" ".join(parts), *parts[:1]}:
                if len(form) > 2 and form[:1].isupper():
                    found.setdefault(form.lower(), set()).add(key)
    return {form: next(iter(keys)) for form, keys in found.items() if len(keys) == 1}


def _named(text: str, known: Mapping[str, str]) -> list[str]:
    """The people `text` names, in the order it names them (each once)."""
    ws = words(text)
    out: list[str] = []
    for i, w in enumerate(ws):
        if not w[:1].isupper():
            continue
        two = f"{w} {ws[i + 1]}".lower() if i + 1 < len(ws) else ""
        key = known.get(two) or known.get(w.lower())
        if key is not None and key not in out:
            out.append(key)
    return out


def lines(prose: str, people: Mapping[str, Iterable[str]]) -> list[Line]:
    """Every line of dialogue in `prose`, in order, with its speaker when the narration
    says who (see the module's docstring)."""
    known = forms(people)
    out: list[Line] = []
    for para in paragraphs(prose):
        parts = dialogue(para)
        narrated = " ".join(p.text for p in parts if not p.speech)
        only = _named(narrated, known)
        for i, part in enumerate(parts):
            if not part.speech:
                continue
            after = parts[i + 1].text if i + 1 < len(parts) and not parts[i + 1].speech else ""
            before = parts[i - 1].text if i and not parts[i - 1].speech else ""
            near = (_named(" ".join(words(after)[:REACH]), known)
                    or _named(" ".join(words(before)[-REACH:]), known) or only)
            who = near[0] if len(near) == 1 else None
            out.append(Line(_unquoted(part.text), who))
    return out


def _unquoted(text: str) -> str:
    return re.sub(r"^[\"“‘']+|[\"”’']+$", "", text.strip()).strip()


def speakers(prose: str, people: Mapping[str, Iterable[str]]) -> list[str]:
    """The keys of the people who say a line of `prose`, in the order they first speak."""
    return list(dict.fromkeys(line.speaker for line in lines(prose, people) if line.speaker))
