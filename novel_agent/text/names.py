"""Is this a name? Plausibility checks for the names and bullets a small model proposes.

A 135M-parameter model, asked for a new character or place, answers things like
"you guys know what makes my job incredible", "lamp opened in scene 1" or
"location_id: 3227718265#abc". `name_problem` says why such a string is not a name
(or None when it is plausible), `person_problem` why it is no person's ("strangers",
"She", "Thursday"), `written_name` whether a text writes it as a name (not only where
a sentence starts, not only as the "Keel" of "Keel Street"), `name_head` keeps the
name a description starts with, `normalize_name` gives the key two spellings of one
name share, `clean_bullets` keeps only summary bullets that are prose, and
`strip_markers` takes the prompt's own marks off an item a model copied back, and
`variant_spelling` says whether two full names are one person's spelled two ways
("Katrin Holloway", "Katryn Holloway"). Pure functions of their arguments: no I/O, no
configuration.
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
    if "(" in text or ")" in text:     # "Edda Lorn (the lighthouse keeper)": name_head cuts it
        return "a description in parentheses, not a name"
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
# Words a text capitalises that never name a person on their own, each a kind: what an
# extractor reading an imported book proposed as characters ("She", "His", "Beneath",
# "Afterwards", "That", "Thursday", "Miss"). The months that are also given names (April,
# May, June, August) are not among them.
_NOT_PEOPLE: dict[str, frozenset[str]] = {kind: frozenset(words.split()) for kind, words in {
    "a pronoun": "i me my mine myself you your yours he him his himself she her hers herself "
                 "it its itself we us our ours they them their theirs one someone somebody "
                 "something anyone anybody anything everyone everybody everything nobody "
                 "nothing none no yes this that these those each every all both some any "
                 "another other such what who whom whose which",
    "a word that opens a sentence": "a an the and but or nor so yet then than as if unless "
                 "until till because although though while whilst when where why how once "
                 "above across after afterwards afterward against along among around at "
                 "before behind below beneath beside besides between beyond by down during "
                 "except for from in inside into near of off on onto out outside over past "
                 "since through throughout to toward towards under underneath up upon with "
                 "within without again almost already also always later meanwhile never now "
                 "perhaps maybe still suddenly soon there here today tomorrow tonight "
                 "yesterday together instead however finally first next last often "
                 "sometimes somewhere nowhere everywhere anyway indeed only even just not "
                 "well oh ah",
    "a day of the week": "monday tuesday wednesday thursday friday saturday sunday",
    "a month": "january february march july september october november december",
    "a title alone": "mr mrs ms mx miss dr sir madam madame lady lord mister missus dame "
                     "herr frau monsieur mademoiselle",
}.items()}


def person_problem(name: str) -> str | None:
    """Why `name` is not a person's proper name (None if it could be one): besides what
    name_problem says, every word but particles ("van", "of") opens with a capital, and a
    name of one word is none of the words that never name a person alone (a pronoun, a
    word that opens a sentence, a day, a month, a title).

    >>> person_problem("strangers")
    'a common noun in lower case, not a name'
    >>> person_problem("Jan van Dyke") is None
    True
    >>> person_problem("Thursday")
    'a day of the week, not a name'
    """
    words = [w.strip("\"'“”‘’()") for w in name.split()]
    lower = [w for w in words if w and not w[0].isupper() and w.lower() not in _PARTICLES]
    if not words or lower or all(w.lower() in _PARTICLES for w in words if w):
        return "a common noun in lower case, not a name"
    kind = not_a_name(words[0]) if len(words) == 1 else None
    return f"{kind}, not a name" if kind else None


def not_a_name(word: str) -> str | None:
    """What kind of word `word` is when it never names a person alone ("a pronoun", "a
    day of the week", "a title alone", ...), else None."""
    key = word.strip(".,;:!?\"'“”‘’()").casefold()
    return next((kind for kind, words in _NOT_PEOPLE.items() if key in words), None)


# Words of a name written in lower case ("Anne of Cleves"), and so never a name's first
# word when a full name is matched by its first word alone.
PARTICLES = frozenset({"the", "of", "and", "de", "del", "der", "van", "von", "da", "di", "du",
                       "la", "le", "al", "bin", "ibn", "y"})


def written_name(name: str, text: str) -> str | None:
    """`name` as `text` writes it as a person's name, or None: the whole name (case aside,
    any spacing) with its words capitalized but for particles ("of", "van"), once where it
    is not part of a longer run of capitalized words ("Keel" of "Keel Street", "Miss" of
    "Miss Harrow"; a word that opens a sentence, such as "Then", is no part of a name),
    and, for a name of one word, once where a sentence does not start: 'Someone went in.'
    and 'He said, "That was all."' name no one, 'said Someone' would.

    >>> written_name("tobin", "Tobin Keel came. Then Tobin left.")
    'Tobin'
    >>> written_name("Keel", "He ran down Keel Street.") is None
    True
    """
    words = name.split()
    if not words:
        return None
    pattern = r"(?<![\w'’])" + r"\s+".join(map(re.escape, words)) + r"(?![\w’]|'\w)"
    for match in re.finditer(pattern, text, re.IGNORECASE):
        found = match.group(0).split()
        capital = [w for w in found if w.lower() not in PARTICLES or w is found[0]]
        if not all(w[0].isupper() for w in capital) or _in_longer_name(text, match):
            continue
        if len(capital) > 1 or not _starts_sentence(text, match.start()):
            return " ".join(found)
    return None


def _starts_sentence(text: str, at: int) -> bool:
    if at and text[at - 1] in "\"“‘'":       # quoted speech opens here
        return True
    before = text[:at].rstrip(" \t\"'“‘(*_")
    return not before or before[-1] in ".!?…:\n"


_WORD_BEFORE = re.compile(r"([\w'’-]+)([^\S\n]*\n?[^\S\n]*)$")
_WORD_AFTER = re.compile(r"([^\S\n]*\n?[^\S\n]*)([\w'’-]+)")


def _in_longer_name(text: str, match: re.Match[str]) -> bool:
    """Whether a word that could be part of a name stands right beside the match (across
    spaces and at most one line break, no punctuation): a capitalized word that is not
    one of those that never name a person alone ("Miss", "Thursday") and, where a
    sentence starts ("Old Tomas", "Keel Street was empty."), one the text also writes
    capitalized where no sentence starts ("down Keel Street": "Keel" is a name's)."""
    start = max(0, match.start() - 80)
    before = _WORD_BEFORE.search(text[start:match.start()])
    after = _WORD_AFTER.match(text, match.end())
    if after and after.group(1) and _name_like(after.group(2)):
        return True
    if not (before and before.group(2) and _name_like(before.group(1))):
        return False
    return not _starts_sentence(text, start + before.start()) or \
        _capitalized_within(before.group(1), text)


def _name_like(word: str) -> bool:
    return word[0].isupper() and not not_a_name(word)


def _capitalized_within(word: str, text: str) -> bool:
    """Whether `text` writes `word`, capitalized, where a sentence does not start."""
    return any(not _starts_sentence(text, m.start())
               for m in re.finditer(rf"(?<![\w'’-]){re.escape(word)}(?![\w'’-])", text))


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


# -- one person, two spellings ------------------------------------------------------------

VOWELS = frozenset("aeiouy")
SWAPPED_LETTERS = 6     # a vowel swapped: both given names this long at least
INSERTED_LETTERS = 5    # a letter inserted: the shorter given name this long at least
# Given names one letter apart that the rules below would take for one, and are two names
# (a man's and a woman's, or two names of their own): never one person.
TWO_NAMES = frozenset(map(frozenset, [
    ("francis", "frances"), ("jesse", "jessie"), ("marvin", "mervin"), ("carla", "carola"),
    ("michele", "michelle"), ("daniele", "danielle"), ("gabriele", "gabrielle")]))


def variant_spelling(name: str, other: str) -> bool:
    """Whether two full names are one person's name spelled two ways ("Katrin Holloway" and
    "Katryn Holloway"): a model that invented a name misspells it later, and memory must
    not take the misspelling for a second person. The rules are conservative, because a
    merge is worse than a duplicate (two siblings share a surname; a duplicate is only a
    second card, a merge loses a person):

    - both are full names of as many words, every word after the first the same (the
      surname is never guessed at: "Anna Larsen" and "Anna Larson" stay two);
    - the given names begin and end with the same letter: the end of a name is where it
      turns into another (Daniel, Daniela; Louis, Louise; Maria, Mario; Simon, Simone);
    - they are one letter apart: a vowel for a vowel, both names of SWAPPED_LETTERS
      letters or more ("Katrin", "Katryn"; never a consonant: "Marta", "Marla"; never in
      short names, where it makes another: "Mara", "Mira"; "Tammy", "Timmy"), or one
      letter more, the shorter of INSERTED_LETTERS or more ("Teresa", "Theresa";
      "Philip", "Phillip");
    - and not two names known to differ so (TWO_NAMES: "Francis", "Frances").

    >>> variant_spelling("Katrin Holloway", "Katryn Holloway")
    True
    >>> variant_spelling("Mara Voss", "Mira Voss"), variant_spelling("Daniel Voss", "Daniela Voss")
    (False, False)
    """
    a, b = normalize_name(name).split(), normalize_name(other).split()
    return len(a) >= 2 and len(a) == len(b) and a[1:] == b[1:] and \
        one_letter_apart(a[0], b[0])


def one_letter_apart(a: str, b: str) -> bool:
    """Whether two given names (normalized) are spellings of one (see variant_spelling)."""
    if a == b or not (a.isalpha() and b.isalpha()) or a[0] != b[0] or a[-1] != b[-1] \
            or frozenset((a, b)) in TWO_NAMES:
        return False
    if len(a) == len(b):
        differ = [(x, y) for x, y in zip(a, b) if x != y]
        return len(a) >= SWAPPED_LETTERS and len(differ) == 1 and \
            differ[0][0] in VOWELS and differ[0][1] in VOWELS
    short, long = sorted((a, b), key=len)
    return len(long) == len(short) + 1 and len(short) >= INSERTED_LETTERS and \
        any(long[:at] + long[at + 1:] == short for at in range(1, len(long) - 1))
