"""Prose measures: what a reader notices about a text, counted without a model.

The parts, each its own module (pure functions, no I/O):

- split: paragraphs, sentences and words of fiction, and its dialogue (speech) apart
  from its narration;
- phrases: the built-in slop list (SLOP) and a project's own phrases to avoid,
  matched with their inflections;
- ngrams: repeated 3- to 5-grams within a text and across the texts before it;
- measures: lexical diversity (MTLD, moving-average TTR), length spreads, punctuation;
- narration: the narration's person and tense, with a confidence;
- functionwords: the function-word profile and a text's distinctive words;
- fingerprint: all of these for one text (Fingerprint), its distance from a style,
  and a measure's degradation from a book's first quarter to its last.

The names below are the package's API; import them from here.
"""

from novel_agent.text.prose.fingerprint import (
    WEIGHTS,
    Degradation,
    Distance,
    Fingerprint,
    degradation,
    distance,
    fingerprint,
)
from novel_agent.text.prose.functionwords import (
    FUNCTION_WORDS,
    distinctive_words,
    function_profile,
    profile_distance,
)
from novel_agent.text.prose.measures import MARKS, Spread, mattr, mtld, punctuation, spread
from novel_agent.text.prose.narration import Guess, person, person_of, tense, tense_of
from novel_agent.text.prose.ngrams import (
    SIZES,
    most_repeated,
    ngrams,
    repeats,
    repeats_across,
    repeats_by_size,
    sentence_ngrams,
)
from novel_agent.text.prose.phrases import (
    SLOP,
    Hit,
    PhraseList,
    per_thousand,
    phrase_list,
    slop_counts,
    slop_hits,
)
from novel_agent.text.prose.split import (
    Part,
    dialogue,
    narration,
    paragraphs,
    sentences,
    speech_share,
    words,
)

__all__ = [
    "FUNCTION_WORDS", "MARKS", "SIZES", "SLOP", "WEIGHTS", "Degradation", "Distance",
    "Fingerprint", "Guess", "Hit", "Part", "PhraseList", "Spread", "degradation", "dialogue",
    "distance", "distinctive_words", "fingerprint", "function_profile", "mattr",
    "most_repeated", "mtld", "narration", "ngrams", "paragraphs", "per_thousand", "person", "person_of",
    "phrase_list", "profile_distance", "punctuation", "repeats", "repeats_across",
    "repeats_by_size", "sentence_ngrams", "sentences", "slop_counts", "slop_hits",
    "speech_share", "spread", "tense", "tense_of", "words",
]
