"""Is this a name? Plausibility checks for the names and bullets a small model proposes.

A 135M-parameter model, asked for a new character or place, answers things like
"you guys know what makes my job incredible", "lamp opened in scene 1" or
"location_id: 3227718265#abc". `name_problem` says why such a string is not a name
(or None when it is plausible), `name_head` keeps the name a description starts
with, `normalize_name` gives the key two spellings of one name share, and
`clean_bullets` keeps only summary bullets that are prose, `strip_markers` takes the
prompt's own marks off an item a model copied back. Pure functions of their
arguments: no I/O, no configuration.
"""

from __future__ import annotations

import functools
import re
import unicodedata

MAX_NAME_WORDS = 6
_PRONOUNS = {"i", "you", "we", "they", "he", "she", "it", "this", "that", "there", "these",
             "those", "my", "our", "your", "their", "what", "who", "why", "how"}
# Clauses a name never holds: contractions and common verbs of a sentence.
_CLAUSE = re.compile(
    r"\b(?:\w+n't|i'm|you're|we're|they're|it's|know|knows|knew|makes|made|is|are|was|"
    r"were|does|did|have|has|had|would|could|should|went|"
    r"opened|closed|resolved|introduced|appears|appeared)\b",
    re.IGNORECASE)
_MARKERS = [
    (re.compile(r"\(?\b(?:opened|introduced|resolved|seen|closed) in scene\b", re.I),
     "a prompt marker (\"opened in scene N\")"),
    (re.compile(r"\b[a-z]+_[a-z_]*\b|\b[a-z]+_\d+\b", re.I), "an identifier (snake_case)"),
    (re.compile(r"\b\w+_?id\s*:", re.I), "a key: value pair"),
    (re.compile(r"[\[\]{}<>#|`*=_~\\]"), "markup or brackets"),
    (re.compile(r"\d"), "digits"),
    (re.compile(r"^\s*(?:[-+]|\d+\.)\s"), "a list marker"),
    (re.compile(r"\w\s*:\s*\S"), "a key: value pair"),
]
_SENTENCE_END = re.compile(r"[!?]\s*$|\S\s+\S+\s+\S+\.\s*$")   # !, ?, or 3+ words and "."
_TITLES = re.compile(r"^(?:dr|mr|mrs|ms|st|mt|prof|capt|col|gen|sgt|lt|rev|fr|sr|jr)\.$",
                     re.IGNORECASE)


def name_problem(name: str, *, title: str = "", premise: str = "") -> str | None:
    """Why `name` is not a plausible character or place name, or None if it is.

    >>> name_problem("Dr. Aris Thorne") is None
    True
    >>> name_problem("They didn't know what to do")
    'a sentence, not a name'
    """
    text = " ".join(name.split())
    if not text:
        return "empty"
    for check in (_copied(text, title, premise), _marker(text), _script(text),
                  _shape(text)):
        if check:
            return check
    return None


_HEAD = re.compile(r"\s*(?:,|;|\(|\s[-–—]\s)")


def name_head(name: str, problem) -> str:
    """`name`, or, when it is not a name (`problem(name)` says why) but starts with one
    before a comma, a semicolon, a parenthesis or a dash, that head: a planner that
    copies the setting as the location answers "Skerry Light, a lighthouse on a rock
    island, 1911", and means Skerry Light.

    >>> name_head("Skerry Light, a lighthouse on a rock island, 1911", name_problem)
    'Skerry Light'
    """
    if not name or not problem(name):
        return name
    head = _HEAD.split(name, maxsplit=1)[0].strip()
    return head if head and head != name and not problem(head) else name


def _copied(text: str, title: str, premise: str) -> str | None:
    key = _fold(text)
    if title and key == _fold(title):
        return "the book's title"
    folded_premise = _fold(premise)
    # A short place named in the premise ("the harbour archive") is a name; four words
    # or thirty letters of it copied out are the premise echoed back.
    long_piece = len(key.split()) >= 4 or len(key) >= 30
    if folded_premise and (key == folded_premise or folded_premise in key
                           or (long_piece and key in folded_premise)):
        return "the premise, not a name"
    return None


def _marker(text: str) -> str | None:
    for pattern, reason in _MARKERS:
        if pattern.search(text):
            return reason
    return None


def _script(text: str) -> str | None:
    letters = [c for c in text if c.isalpha()]
    if len(letters) < max(1, len(text.replace(" ", "")) * 0.7):
        return "mostly not letters"
    scripts = {_script_of(c) for c in letters}
    if len(scripts) > 1:
        return f"a mixture of scripts ({', '.join(sorted(scripts))})"
    return None


def _shape(text: str) -> str | None:
    words = text.split()
    if len(words) > MAX_NAME_WORDS:
        return f"more than {MAX_NAME_WORDS} words"
    if _SENTENCE_END.search(text) and not _TITLES.match(words[-1]) and not (
            len(words[-1]) <= 2 and words[-1][0].isupper()):   # "Jon Q. R." keeps its initial
        return "a sentence, not a name"
    if len(words) > 1 and words[0].lower() in _PRONOUNS:
        return "a sentence, not a name"
    if _CLAUSE.search(text):
        return "a sentence, not a name"
    return None


def _script_of(char: str) -> str:
    """The Unicode script of a letter, by the first word of its name (LATIN, HEBREW, …)."""
    try:
        return unicodedata.name(char).split()[0]
    except ValueError:
        return "UNKNOWN"


def _fold(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s']", " ", text.casefold()).split())


@functools.lru_cache(maxsize=1 << 16)
def normalize_name(name: str) -> str:
    """The key for deduplication: case-folded, whitespace collapsed, punctuation trimmed
    at the ends, a leading "the " dropped ("The Harbour Archive." → "harbour archive").
    Kept for the names last asked: every tick asks again for each of the book's names."""
    text = " ".join(name.casefold().split())
    text = text.strip(" \t.,;:!?\"'()[]{}*_-–—")
    if text.startswith("the "):
        text = text[4:].lstrip()
    return text


_PROMPT_MARKS = re.compile(r"^\s*\[[a-z0-9_]+\]\s*|\s*\((?:opened|introduced|resolved|seen|closed) "
                           r"in scene \d+\)", re.IGNORECASE)


def strip_markers(text: str) -> str:
    """`text` without the marks prompts put on memory items, which a model may copy back:
    a leading "[loop_id]" and "(opened in scene N)".

    >>> strip_markers("[lamp_out] The lamp went out. (opened in scene 1)")
    'The lamp went out.'
    """
    return _PROMPT_MARKS.sub("", str(text)).strip()


_KEY_VALUE = re.compile(r"^\s*[\w\s]{1,30}:\s*\S")


def clean_bullets(bullets: list[str]) -> list[str]:
    """The summary bullets that are prose: drops key: value pairs, ids, mostly digits or
    symbols, anything under three words, and a bullet said already (case and spacing
    aside). Keeps order; strips list markers.

    >>> clean_bullets(["- Mara waits at the quay.", "id: 4", "mara waits at  the quay."])
    ['Mara waits at the quay.']
    """
    kept, seen = [], set()
    for bullet in bullets:
        text = re.sub(r"^\s*(?:[-*•]|\d+[.)])\s+", "", str(bullet)).strip()
        key = " ".join(text.casefold().split())
        if _bullet_problem(text) is None and key not in seen:
            kept.append(text)
            seen.add(key)
    return kept


def _bullet_problem(text: str) -> str | None:
    if len(text.split()) < 3:
        return "under three words"
    if _KEY_VALUE.match(text) or re.search(r"\b\w+_id\b|#\w", text):
        return "a key: value pair or an id"
    letters = sum(c.isalpha() for c in text)
    if letters < len(text.replace(" ", "")) * 0.6:
        return "mostly digits or symbols"
    return None


# A person is named with capitals ("Edda Lorn", "Jan van Dyke", "the Reverend Hale" keeps
# its capitalised words); a word in lower case with no capitalised word beside it is a
# common noun ("strangers", "the fishermen", "a sailor").
_PARTICLES = {"de", "da", "di", "del", "van", "von", "der", "den", "la", "le", "du", "of",
              "the", "al", "bin", "ibn", "y", "mac"}


def person_problem(name: str) -> str | None:
    """Why `name` is not a person's proper name (None if it could be one): besides what
    name_problem says, every word but particles ("van", "of") opens with a capital.

    >>> person_problem("strangers")
    'a common noun in lower case, not a name'
    >>> person_problem("Jan van Dyke") is None
    True
    """
    words = [w.strip("\"'“”‘’()") for w in name.split()]
    lower = [w for w in words if w and not w[0].isupper() and w.lower() not in _PARTICLES]
    if not words or lower or all(w.lower() in _PARTICLES for w in words if w):
        return "a common noun in lower case, not a name"
    return None


_QUESTION = re.compile(r"^\W*(?:who|whom|whose|what|which|why|where|when|how|whether|will|would|"
                       r"can|could|does|do|did|is|are|was|were|has|have|had|should|shall|may|"
                       r"might|must)\b", re.IGNORECASE)
COPIED_WORDS = 6      # this many words found word for word in the scene: a copied sentence
_ENDS = re.compile(r"[.!?…\"”’')\]]\s*$")


_NAME_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")


def named_in(text: str, name: str) -> bool:
    """Whether `text` names `name`: by the whole of it, or by any of its words of three
    letters or more that is not a particle or a title ("Mara" or "Quill" of "Mara Quill",
    "Stranger" of "The Stranger"), in any case, as a whole word."""
    words = [w for w in _NAME_WORD.findall(name) if len(w) > 2
             and w.lower() not in _PARTICLES and not _TITLES.match(w + ".")]
    return any(re.search(rf"(?<!\w){re.escape(w)}(?!\w)", text, re.IGNORECASE)
               for w in dict.fromkeys([name.strip(), *words]) if w)


def copied_from(text: str, prose: str, min_words: int = COPIED_WORDS) -> bool:
    """Whether most of `text` stands word for word in `prose`: a run of at least
    `min_words` of its words, covering more than half of them ("What room in her own
    lighthouse that she had never seen" is the scene's sentence with a "What")."""
    words, seen = _fold(text).split(), f" {_fold(prose)} "
    best, start = 0, 0
    for end in range(1, len(words) + 1):
        while start < end and f" {' '.join(words[start:end])} " not in seen:
            start += 1
        best = max(best, end - start)
    return best >= min_words and best * 2 > len(words)


def cut_off(text: str, limit: int) -> bool:
    """Whether `text` looks cut at a length limit of `limit` characters: it reaches the
    limit (less a few) and does not end a sentence ("…the lamp withoutt")."""
    text = text.strip()
    return len(text) >= limit - 4 and not _ENDS.search(text)


def loop_problem(text: str, prose: str = "", limit: int = 160) -> str | None:
    """Why `text` is not an open question for the story's memory (None if it is one): it
    must be asked as a question, in its own words (not a sentence of the scene), whole.

    >>> loop_problem("Who drew the map of the lamp room?") is None
    True
    >>> loop_problem("The stranger cries for help.")
    'not a question'
    """
    text = " ".join(text.split())
    if not text:
        return "empty"
    if re.search(r"\w_|_\w|_\s|[\[\]{}]", text):    # "…to edda during_ ?", "[loop_id]"
        return "an identifier, not a question"
    asked = text.rstrip("?")
    if not (text.endswith("?") or _QUESTION.match(text)) or "?" in asked:
        return "not a question"     # "Who are you? Edda asked the young man." is dialogue
    if cut_off(text, limit):
        return "cut off"
    if prose and copied_from(text, prose):
        return "a sentence copied from the scene"
    return None


def fact_problem(text: str, prose: str = "", limit: int = 160) -> str | None:
    """Why `text` is not a fact to remember (None if it is): a sentence copied from the
    scene, or one cut off at the length limit, is not.

    >>> fact_problem("Edda keeps the lamp at Skerry Light.") is None
    True
    """
    text = " ".join(text.split())
    if not text:
        return "empty"
    if cut_off(text, limit):
        return "cut off"
    if prose and copied_from(text, prose):
        return "a sentence copied from the scene"
    return None
