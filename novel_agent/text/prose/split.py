"""Fiction cut into its parts: paragraphs, sentences, words, and what is said aloud.

`paragraphs` splits on blank lines (a line of "* * *" or a markdown heading is no
paragraph). `sentences` splits a paragraph at its ends (cleanup.sentences: "Mr." and
initials end none, nor a "!" or "…" that a lower-case word follows, as in “Stop!” she
said). `words` are runs of letters and digits, with the apostrophes and hyphens inside
them ("don't", "well-known"); an em-dash or an ellipsis between two words splits them.
`dialogue` cuts a text into narration and speech: speech is what stands between double
quotes (straight or curly), or between ‘single’ curly quotes in a text that has no double
quotes; a quotation left open at a paragraph's end (a speech that runs on into the next
paragraph) closes there. Pure functions of their arguments.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from novel_agent.text.cleanup import sentences as _sentences

WORD = re.compile(r"[^\W_]+(?:['’\-][^\W_]+)*")
_BLANK = re.compile(r"\n\s*\n")
_NOT_PROSE = re.compile(r"^\s*(?:#{1,6}\s|(?:[*\-_]\s*){3,}$)")
_DOUBLE = "\"“”"


class Part(NamedTuple):
    """A stretch of a text: its words are spoken (`speech`) or narrated."""

    text: str
    speech: bool


def words(text: str) -> list[str]:
    """The words of `text`, as written.

    >>> words("“Don't—” Mr. Vane's well-known face… fell.")
    ["Don't", 'Mr', "Vane's", 'well-known', 'face', 'fell']
    """
    return WORD.findall(text.replace("’", "'"))


def paragraphs(text: str) -> list[str]:
    """The paragraphs of `text` (blank-line separated, whitespace collapsed), without
    headings, scene breaks and paragraphs that hold no word."""
    out = []
    for block in _BLANK.split(text):
        lines = [line for line in block.splitlines() if not _NOT_PROSE.match(line)]
        para = " ".join(" ".join(lines).split())
        if WORD.search(para):
            out.append(para)
    return out


def sentences(text: str) -> list[str]:
    """The sentences of `text`, paragraph by paragraph (none runs across a paragraph's
    end), each with at least one word.

    >>> sentences('Mr. Vane ran. “Stop!” she said.\\n\\nHe hid… Then he ran')
    ['Mr. Vane ran.', '“Stop!” she said.', 'He hid…', 'Then he ran']
    """
    return [s for para in paragraphs(text) for s in _sentences(para) if WORD.search(s)]


def dialogue(text: str) -> list[Part]:
    """`text` cut into narration and speech, in order (see the module's docstring for
    what counts as speech)."""
    single = not any(q in text for q in _DOUBLE) and "‘" in text
    out: list[Part] = []
    for para in paragraphs(text):
        out += _parts(para, single)
    return out


def _parts(para: str, single: bool) -> list[Part]:
    parts: list[Part] = []
    start, inside = 0, False
    for i, ch in enumerate(para):
        opens = (ch == "‘" if single else ch in "\"“") and not inside
        closes = inside and (ch in "\"”" if not single else
                             ch == "’" and not para[i + 1:i + 2].isalpha())
        if opens or closes:
            if closes:
                parts.append(Part(para[start:i + 1], True))
                start, inside = i + 1, False
            else:
                parts.append(Part(para[start:i], False))
                start, inside = i, True
    parts.append(Part(para[start:], inside))
    return [p for p in parts if p.text.strip()]


def narration(text: str) -> str:
    """The words of `text` that are not spoken, joined (paragraphs by blank lines)."""
    return " ".join(p.text for p in dialogue(text) if not p.speech)


def speech_share(text: str) -> float:
    """The share of `text`'s words that stand inside quotes (0.0 for a text of no words).

    >>> speech_share('“Run,” she said.')
    0.3333
    """
    spoken = narrated = 0
    for part in dialogue(text):
        n = len(words(part.text))
        if part.speech:
            spoken += n
        else:
            narrated += n
    return round(spoken / (spoken + narrated), 4) if spoken + narrated else 0.0
