"""Prose out of a small model's answer: scaffolding removed, length cut at a sentence.

Small models wrap a scene in markdown: a "# Scene 3: The Lamp" heading, a restated
"Title:" line, a code fence, a table of characters, a `---` before and after, a
"Word count: 350" or the planner's tool notes ("- Opened loop [the_sailor]: …") at
the end. `clean_scaffolding` takes those off and leaves the scene's own paragraphs (a
`***` break inside the scene stays). `drop_copied` takes out paragraphs copied from
the prompt or earlier scenes, word for word or nearly (the last scene's ending written
again with a word changed), and a paragraph the answer already said; `drop_instructions`
the sentences that say the writer's instructions again. `cut_to_sentence`
shortens an over-long answer at the last complete sentence within the limit;
`sentences` splits prose into its sentences. `scaffold_lines` lists what is left of it
in a text (for the doctor and the benchmark).
Pure functions of their arguments.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^\s{0,3}#{1,6}(\s|$)")
_TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")
_RULE = re.compile(r"^\s*(?:(?:-\s*){3,}|(?:\*\s*){3,}|(?:_\s*){3,})$")
_LABEL = re.compile(r"^\W*(?:scene|chapter|part|title|scene title|pov|location|setting|"
                    r"characters|summary|words|word count)\b\s*(?:\d+|[ivxlc]+)?\s*[:.\-–—]",
                    re.IGNORECASE)
# A label of the prompt's own sections, anywhere in the answer: "Scene intention: …",
# "POV: Edda Lorn (now: …)", "Also present: …", "Author's note: …".
_PROMPT_LABEL = re.compile(r"^\W*(?:title|scene title|scene intention|intention|pov|"
                           r"point of view|location|also present|characters present|"
                           r"author's note|steer|premise|genre|tone|setting|protagonist|"
                           r"style guide|notes? from the planner's tools)\s*:", re.IGNORECASE)
_LIST_ITEM = re.compile(r"^\s*(?:[-+*•](?!\s*[-*_])|\d{1,2}[.)])\s+\S")   # not "* * *"
_NUMBERED = re.compile(r"^\W*(?:scene|chapter|part)\s+(?:\d+|[ivxlc]+)"
                       r"(?:\s+(?:continues|continued|begins))?\W*$", re.IGNORECASE)
_BOLD_LINE = re.compile(r"^\s*(\*\*|__)[^*_]+\1\s*$")
_TRAILER = re.compile(r"^\W*(?:word count\W*\d+|\d+\s+words|end of (?:the )?scene\b.*|"
                      r"the end|\(?continued\)?)\W*$", re.IGNORECASE)
_NOTE = re.compile(r"^\W*(?:(?:opened|closed|resolved|still open) loop\b|new (?:character|"
                   r"location):|relationship:|memory on\b|.*\[[a-z0-9]+(?:_[a-z0-9]+)+\])",
                   re.IGNORECASE)      # the planner's tool notes, copied back after the scene
_LABEL_MAX_WORDS = 12
# A sentence about the scene or the book rather than in it: the prompt's instruction said
# back ("In this scene 10 ends as … resolving the premise": the 1.5B on a book's last beat).
# Issue 51: "The story continued as follows in a more detailed and vivid manner:" opened a
# scene (what follows its colon is kept), and "the same man from scene 6 in scene 5!".
_META = re.compile(r"\b(?:in this scene|this scene (?:ends|begins|opens|closes|shows)|"
                   r"the (?:book's|story's) (?:premise|ending|last scene)|"
                   r"resolv\w* the premise|the premise\b|"
                   r"the (?:story|scene|narrative) (?:continue[sd]?|resume[sd]?)"
                   r"(?= as follows| below| in a more|\s*:)|"
                   r"(?:previous|next|following|earlier) scene\b|scenes? \d+\b)", re.IGNORECASE)


def clean_scaffolding(text: str, title: str = "") -> str:
    """The prose of `text` without the markdown a model put around it.

    Drops code fences (keeping what they held), headings, table rows, rules at the
    start or end, and leading lines that restate the scene ("Scene 3:", "Title: …",
    the title itself, a lone bold line, a line set as a title: "The Keeper’s Map") or
    trail it ("Word count: 350", the prompt's tool notes copied back: "- Opened loop
    [the_sailor]: …"), and every sentence about the scene rather than in it ("In this
    scene 10 ends as she … resolving the premise."). Blank runs collapse to one blank line.

    >>> clean_scaffolding("# Scene 3: The Lamp\\n---\\nMara lit the lamp.\\n---")
    'Mara lit the lamp.'
    """
    lines = [line for line in text.replace("\r\n", "\n").split("\n")
             if not (_FENCE.match(line) or _HEADING.match(line) or _TABLE_ROW.match(line)
                     or is_scaffold_line(line))]
    lines = _trim(lines, lambda line: _is_leading_scaffold(line, title))
    lines = _trim(lines[::-1], _is_trailing_scaffold)[::-1]
    lines = [_without_meta(line) for line in lines]
    lines = _trim(lines[::-1], _is_trailing_scaffold)[::-1]
    return re.sub(r"\n\s*\n(\s*\n)+", "\n\n", "\n".join(lines)).strip()


def _without_meta(line: str) -> str:
    """`line` without its sentences about the scene or the book (_META); a line of prose
    that has none stays as it was, spacing and all."""
    if not _META.search(line):
        return line
    return " ".join(t for t in (_meta_free(s) for s in sentences(line)) if t)


def _meta_free(sentence: str) -> str:
    """`sentence`, "" when it is about the scene or the book, or what follows its colon
    when only what comes before is ("The story continued as follows: She ran." is "She
    ran.")."""
    if not _META.search(sentence):
        return sentence
    head, colon, tail = sentence.partition(":")
    return tail.strip() if colon and _META.search(head) and not _META.search(tail) else ""


def is_scaffold_line(line: str) -> bool:
    """Whether `line` is scaffolding wherever it stands: one of the prompt's labels
    ("Scene intention: …", "POV: …"), a planner's tool note ("- Opened loop [x]: …"),
    a list item, a heading or a table row. A novel's prose has none of them.

    >>> is_scaffold_line("- Open loop [the_stranger_cries]: who is he?")
    True
    >>> is_scaffold_line("She said: come home.")
    False
    """
    return bool(_PROMPT_LABEL.match(line) or _NOTE.match(line) or _LIST_ITEM.match(line)
                or _HEADING.match(line) or _TABLE_ROW.match(line))


def scaffold_lines(text: str) -> list[str]:
    """The lines of `text` that are scaffolding (see is_scaffold_line), for the doctor
    and the benchmark."""
    return [line.strip() for line in text.splitlines() if line.strip() and is_scaffold_line(line)]


def prompt_words(text: str) -> int:
    """Words of `text` in lines that copy the prompt's own scaffolding (its labels, the
    planner's notes), as opposed to markdown a model wraps prose in."""
    return sum(len(line.split()) for line in text.splitlines()
               if _PROMPT_LABEL.match(line) or _NOTE.match(line))


def _trim(lines: list[str], is_scaffold) -> list[str]:
    """Drop blank and scaffold lines from the front until the first line of prose."""
    start = 0
    while start < len(lines) and (not lines[start].strip() or is_scaffold(lines[start])):
        start += 1
    return lines[start:]


def _is_leading_scaffold(line: str, title: str) -> bool:
    short = len(line.split()) <= _LABEL_MAX_WORDS
    return bool(_RULE.match(line) or (short and (
        _LABEL.match(line) or _NUMBERED.match(line) or _BOLD_LINE.match(line)
        or (title and _bare(line) == _bare(title)) or _is_title_line(line))))


def _is_title_line(line: str) -> bool:
    """A heading without its #: a short line ending no sentence, each of its longer words
    capitalised ("The Keeper’s Map", "Scene 3 - The Lost Room": the 1.5B opened scenes
    with the book's title)."""
    words = re.findall(r"[^\W\d_][\w’']*", line)
    longer = [w for w in words if len(w) >= 4]
    return (bool(longer) and len(line.split()) <= 10 and not re.search(r"[.!?…:;,\"”’)]\s*$", line)
            and all(w[0].isupper() for w in longer))


def _is_trailing_scaffold(line: str) -> bool:
    return bool(_RULE.match(line) or _TRAILER.match(line) or _NOTE.match(line))


def _bare(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s']", " ", text.casefold()).split())


COPIED_MIN_WORDS = 10     # a paragraph this long found word for word in the prompt is a copy
NEAR_MIN_WORDS = 6        # a paragraph this long, mostly made of the prompt's word runs, too
NEAR_SHARE = 0.6          # of its three-word runs found in the prompt (or said above it)
NEAR_SENTENCE_WORDS = 8   # in a paragraph of its own, a sentence this long is a copy
NEAR_SENTENCE_SHARE = 0.5  # when this share of its three-word runs is found already (the
#   demo's own sentences scored up to 0.44, the one it wrote a third time 0.70; the
#   paraphrased retellings of five later demos' scenes 0.53-0.62: "With trembling hands, Edda
#   inserts the map into her pocket once more", "There were no windows or doors leading out")
# Measured on the demo's scenes (1.5B): its own paragraphs score 0.00-0.18 against the
# writer's prompt; those it wrote again from an earlier scene 0.61-1.00 ("He wore a
# trenchcoat with a cap and held a long knife in hand", the "Who are you?" exchange).
_WORDS = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def _trigrams(text: str) -> set[tuple[str, ...]]:
    words = _WORDS.findall(text.casefold().replace("’", "'"))
    return {tuple(words[i:i + 3]) for i in range(len(words) - 2)}


def drop_copied(text: str, prompt: str, near: bool = True) -> tuple[str, int]:
    """`text` without the paragraphs copied from `prompt` (small models write the last
    scene's ending again, word for word or with a word changed) or from a paragraph
    above them in `text`, and how many went. A paragraph of COPIED_MIN_WORDS words
    found word for word, or of NEAR_MIN_WORDS words most of whose three-word runs
    (NEAR_SHARE) are found, is a copy, and so is a sentence of NEAR_SENTENCE_WORDS in a
    paragraph of its own when NEAR_SENTENCE_SHARE of its runs are (the demo's "she needed
    to find someone who could help her return home safely" in three scenes running);
    case, spacing and punctuation do not count; shorter paragraphs ("Yes.") stay.
    Without `near`, only word-for-word copies of paragraphs count. Returns the text and
    how many paragraphs and sentences went.

    >>> drop_copied("She woke.\\n\\nThe sea was grey and cold and the boats were all out early.",
    ...             "... the sea was grey and cold and the boats were all out early. ...")
    ('She woke.', 1)
    >>> drop_copied("He wore a coat and held a long knife in his hand.",
    ...             "He wore a trench coat and held a long knife in hand.")
    ('', 1)
    """
    seen = " ".join(prompt.casefold().split())
    runs = _trigrams(prompt)
    paragraphs = re.split(r"\n\s*\n", text)
    kept, copies = [], 0
    for paragraph in paragraphs:
        words, grams = len(paragraph.split()), _trigrams(paragraph)
        exact = words >= COPIED_MIN_WORDS and " ".join(paragraph.casefold().split()) in seen
        if exact or (near and words >= NEAR_MIN_WORDS and _copied(grams, runs, NEAR_SHARE)):
            copies += 1
        elif near:
            said = sentences(paragraph)
            own = [t for t in said if not _copied_sentence(t, runs)]
            copies += len(said) - len(own)
            kept += [" ".join(own)] if own else []
        else:
            kept.append(paragraph)
        runs |= grams
    return "\n\n".join(kept).strip(), copies


def copied_sentences(said: Sequence[str], source: str) -> list[str]:
    """The sentences of `said` that are near-copies of `source`: NEAR_SENTENCE_WORDS words
    or more, NEAR_SENTENCE_SHARE of whose three-word runs are in it.

    >>> copied_sentences(["She plans the scene.", "Introduce the protagonist and the world, "
    ...                   "and create them with tools."], "... introduce the protagonist and "
    ...                  "the world, and create them with tools.")
    ['Introduce the protagonist and the world, and create them with tools.']
    """
    runs = _trigrams(source)
    return [t for t in said if _copied_sentence(t, runs)]


def _copied_sentence(sentence: str, runs: set[tuple[str, ...]]) -> bool:
    return (len(sentence.split()) >= NEAR_SENTENCE_WORDS
            and _copied(_trigrams(sentence), runs, NEAR_SENTENCE_SHARE))


def _copied(grams: set[tuple[str, ...]], runs: set[tuple[str, ...]], share: float) -> bool:
    return bool(grams) and len(grams & runs) >= share * len(grams)


# A sentence of the prose that says an instruction of the writer's prompt again ("Close
# this scene; leave no question open.", of "Close it; leave no question open."): most of
# its words are those of one of the instructions' sentences or clauses, among them
# INSTRUCTION_WORDS words that are not common ones, and it says most of that
# instruction's own. A line of dialogue is prose, whatever it says.
INSTRUCTION_SHARE = 0.7     # of the sentence's words found in one instruction
INSTRUCTION_COVER = 0.6     # of that instruction's uncommon words found in the sentence
INSTRUCTION_WORDS = 3       # uncommon words shared, at least
_COMMON = frozenset("a an the and or but of to in on at by for with from as is are was be it "
                    "its this that these those no not do don't nor so than then there here "
                    "what who how when where which your you she he her his they them their "
                    "i my me we our one only now".split())
_QUOTES = re.compile(r"[\"“”„«»]|(?:^|\s)['‘]|['’](?:\s|$)")


def instruction_sentences(text: str, instructions: str) -> list[str]:
    """The sentences of `text` that say one of `instructions`' again (see
    INSTRUCTION_SHARE): the writer's prompt's own words written into the scene.

    >>> instruction_sentences("She shut the kiln. Close this scene; leave no question open.",
    ...                       "This is the last scene.\\nClose it; leave no question open.")
    ['Close this scene; leave no question open.']
    >>> instruction_sentences("She would bring it to an end within a few days.",
    ...                       "Continue the scene exactly where it stopped, and bring it to "
    ...                       "an end within a few sentences.")
    []
    """
    told = [(words, words - _COMMON) for words in map(_word_set, _instruction_units(instructions))
            if words - _COMMON]
    return [s for p in re.split(r"\n\s*\n", text) for s in sentences(p) if _says(s, told)]


def _instruction_units(instructions: str) -> list[str]:
    """The sentences of `instructions`, line by line, and their clauses between a ";", a
    ":" or a "," ("Close it", "leave no question open")."""
    units = [s for line in instructions.splitlines() for s in sentences(line)]
    return units + [c for s in units for c in re.split(r"[;:,]", s) if c.strip() and c != s]


def _word_set(text: str) -> frozenset[str]:
    return frozenset(_WORDS.findall(text.casefold().replace("’", "'")))


def _says(sentence: str, told: list[tuple[frozenset[str], frozenset[str]]]) -> bool:
    words = _word_set(sentence)
    if len(words) < INSTRUCTION_WORDS + 1 or _QUOTES.search(sentence):
        return False
    for unit, uncommon in told:
        shared = words & unit
        if (len(shared) >= INSTRUCTION_SHARE * len(words)
                and len(shared & uncommon) >= max(INSTRUCTION_WORDS,
                                                  INSTRUCTION_COVER * len(uncommon))):
            return True
    return False


def drop_instructions(text: str, instructions: str) -> tuple[str, list[str]]:
    """`text` without its sentences that say the writer's `instructions` again
    (instruction_sentences), and those sentences; a paragraph that has none stays as
    it was."""
    found = set(instruction_sentences(text, instructions))
    if not found:
        return text, []
    kept, dropped = [], []
    for paragraph in re.split(r"\n\s*\n", text):
        said = sentences(paragraph)
        own = [s for s in said if s not in found]
        dropped += [s for s in said if s in found]
        if own:
            kept.append(paragraph if len(own) == len(said) else " ".join(own))
    return "\n\n".join(kept).strip(), dropped


_GLUED = re.compile(r"\b[A-Za-z]?[a-z]{4,}\b")


def unglue(text: str, source: str) -> tuple[str, list[str]]:
    """`text` with its words run together split again, and which: a word found nowhere
    in `source` (the prompt and the last scenes) nor elsewhere in `text`, that two words
    of `source` make when they stand side by side there. A small local model under
    llama.cpp's DRY penalty, kept from saying "on this island" a second time, writes
    "onthis island"; "lighthouse" is left alone when `source` or `text` has it.

    >>> unglue("It did not ringtrue onthis island.", "it did ring true on this rock")
    ('It did not ring true on this island.', ['ringtrue', 'onthis'])
    """
    known = set(_WORDS.findall(source.casefold()))
    pairs = {f"{a} {b}" for a, b in re.findall(r"(?=\b([a-z]+)\s+([a-z]+)\b)", source.casefold())}
    counts: dict[str, int] = {}
    for word in _WORDS.findall(text.casefold()):
        counts[word] = counts.get(word, 0) + 1
    fixed: list[str] = []

    def split(match: re.Match[str]) -> str:
        word = match.group(0)
        bare = word.casefold()
        if bare in known or counts.get(bare, 0) > 1:
            return word
        for i in range(2, len(word) - 1):
            if f"{bare[:i]} {bare[i:]}" in pairs:
                fixed.append(word)
                return f"{word[:i]} {word[i:]}"
        return word

    return _GLUED.sub(split, text), fixed


class Cut(NamedTuple):
    """What `cut_to_sentence` returns: the text, and whether it ends mid-sentence."""

    text: str
    mid_sentence: bool     # True only when no sentence ended within the limit


_WORD = re.compile(r"\S+")
_SENTENCE_END = re.compile(r"[.!?…][\"'”’)\]]*(?=\s|$)")
_ABBREVIATION = re.compile(r"(?:^|\s)[\"'“‘(]*(?:Dr|Mr|Mrs|Ms|St|Mt|Prof|Capt|Col|Gen|Sgt|Lt|"
                           r"Rev|Fr|Sr|Jr|vs|etc|e\.g|i\.e|[A-Z])\.$")


def cut_to_sentence(text: str, max_words: int) -> Cut:
    """`text` cut to at most `max_words` words, at the last sentence that ends within them.

    Text within the limit comes back unchanged (`mid_sentence` False). If no sentence
    ends within the limit, the cut falls between words and `mid_sentence` is True, so
    the caller can say so or ask for more. Paragraph breaks are kept; a word is never
    split; "Dr." or an initial is not taken for a sentence's end.

    >>> cut_to_sentence("She ran. He hid in the dark.", 4)
    Cut(text='She ran.', mid_sentence=False)
    """
    if max_words < 1:
        raise ValueError(f"max_words must be at least 1, not {max_words}")
    words = list(_WORD.finditer(text))
    if len(words) <= max_words:
        return Cut(text, False)
    limit = words[max_words - 1].end()
    ends = [m.end() for m in _SENTENCE_END.finditer(text, 0, limit)
            if not _ABBREVIATION.search(text, max(0, m.start() - 12), m.start() + 1)]
    if ends:
        return Cut(text[:ends[-1]].rstrip(), False)
    return Cut(text[:limit].rstrip(), True)


_SPLIT = re.compile(r"(?<=[.!?…])[\"'”’)]*\s+")


def sentences(text: str) -> list[str]:
    """The sentences of `text`, in order ("Dr." and initials do not end one, nor a
    mark followed by a lower-case word).

    >>> sentences("Dr. Vane ran. “Stop!” she said. He hid")
    ['Dr. Vane ran.', '“Stop!” she said.', 'He hid']
    """
    out: list[str] = []
    start = 0
    for m in _SPLIT.finditer(text):
        if (_ABBREVIATION.search(text, max(0, m.start() - 12), m.start())
                or text[m.end():m.end() + 1].islower()):    # “Stop!” she said.
            continue
        out.append(text[start:m.end()].strip())
        start = m.end()
    out.append(text[start:].strip())
    return [" ".join(s.split()) for s in out if s.strip()]


def unwrap(text: str) -> str:
    """Strip what models wrap an answer in: code fences, a leading 'Scene N' heading."""
    text = text.strip()
    fenced = re.fullmatch(r"```(?:markdown|md)?\s*(.*?)```", text, re.S)
    if fenced:
        text = fenced.group(1).strip()
    text = re.sub(r"^#+\s*scene\s+\d+[^\n]*\n+", "", text, flags=re.I)
    return text.strip()
