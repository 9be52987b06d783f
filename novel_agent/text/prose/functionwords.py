"""Function words: the small words every text uses, whose proportions are a writer's habit.

`FUNCTION_WORDS` holds 156 English ones (articles, pronouns, prepositions,
conjunctions, auxiliaries, common adverbs); `function_profile(words)` gives each one's
rate per 1,000 words, and `profile_distance` how far two profiles are (half the L1
distance between their shares, 0 alike to 1 disjoint). `distinctive_words` ranks the
content words a text uses more than a background does. Pure.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence

FUNCTION_WORDS: tuple[str, ...] = tuple("""
the a an and but or nor so yet for of in on at by with from to into onto upon over under
about above after before behind below between through during without within against
across along among around toward towards off out up down than as like
i me my mine myself we us our ours you your yours he him his himself she her hers herself
it its itself they them their theirs themselves this that these those who whom whose which
what there here
is am are was were be been being have has had do does did will would shall should can could
may might must
not no never ever only just very too also still even then now again once
if when while because though although until unless since whether where how why
all some any each every both either neither such much many more most other another
one own same
""".split())
_FUNCTION = frozenset(FUNCTION_WORDS)


def function_profile(words: Sequence[str]) -> dict[str, float]:
    """The rate per 1,000 of `words` (case ignored, two places) of each function word
    they use (one they never use is no key).

    >>> function_profile(["The", "cat", "and", "the", "dog"])["the"]
    400.0
    """
    counts = Counter(w.lower() for w in words)
    n = len(words)
    return {w: round(counts[w] * 1000 / n, 2) for w in FUNCTION_WORDS if counts[w]}


def profile_distance(a: Mapping[str, float], b: Mapping[str, float]) -> float:
    """How far apart two function-word profiles are: half the L1 distance between the
    shares each word has of its profile's function words (0 alike, 1 nothing shared).
    Words only one profile has count as 0 in the other; an empty profile is 1 from any
    other, 0 from an empty one."""
    ta, tb = sum(a.values()), sum(b.values())
    if not ta or not tb:
        return 0.0 if ta == tb else 1.0
    keys = set(a) | set(b)
    return round(sum(abs(a.get(k, 0) / ta - b.get(k, 0) / tb) for k in keys) / 2, 4)


def is_function_word(word: str) -> bool:
    """Whether `word` (any case) is one of FUNCTION_WORDS."""
    return word.lower() in _FUNCTION


def distinctive_words(words: Sequence[str], background: Mapping[str, int] | None = None,
                      top: int = 20, min_count: int = 2) -> list[str]:
    """The content words of `words` most its own: by the log-ratio of their rate here to
    their rate in `background` (word counts of a larger body, add-one smoothed), or by
    how often they occur when there is no background. Function words, words of fewer
    than three letters, words said fewer than `min_count` times and words only ever
    written with a capital (names) are left out."""
    counts = Counter(w.lower() for w in words)
    lower = {w for w in words if not w[:1].isupper()}
    candidates = {w: c for w, c in counts.items()
                  if c >= min_count and len(w) >= 3 and w not in _FUNCTION and w in lower
                  and not w.isdigit()}
    if background is None:
        ranked = sorted(candidates, key=lambda w: (-candidates[w], w))
        return ranked[:top]
    n, nb = len(words) or 1, (sum(background.values()) or 1)
    vocab = len(background) + 1

    def score(w: str) -> float:
        return math.log(candidates[w] / n) - math.log((background.get(w, 0) + 1) / (nb + vocab))

    return sorted(candidates, key=lambda w: (-score(w), w))[:top]
