"""The book's style: `style.yaml`, measured from an author's sample, edited by hand.

`learn(texts)` measures the sample with text.prose (its fingerprint: person, tense,
sentence and paragraph length, dialogue share, lexical diversity, punctuation, the
function-word profile, its most distinctive words) and picks a short passage of it,
dialogue and narration both, that reads like the whole; `style_text` writes them as
YAML with a comment on each key. `read_style` reads the file back, every key checked:
a mistake is a FileFormatError of one line naming the file, the line and the key. A
key deleted is a measure the author stops caring about (text.prose.distance compares
only the keys a style has); `avoid` lists the author's own phrases never to use,
beside the built-in slop list; `sample` is the passage the writer is shown.

`style_lines` is what the writer is told of it, in a few lines. Pure but for
`read_style`, which reads the file.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from statistics import fmean
from typing import Any

import yaml

from novel_agent.errors import FileFormatError
from novel_agent.files import parse_front_matter, read_yaml, yaml_line
from novel_agent.text.prose import (
    MARKS,
    fingerprint,
    paragraphs,
    sentences,
    slop_hits,
    speech_share,
    words,
)
from novel_agent.yaml_comments import keep_comments

STYLE_FILE = "style.yaml"
_HEADER = re.compile(r"^# The book's style, measured by `novel style learn` from .*\n"
                     r"# \([\d,]+ words\)\. .*\n", re.M)     # style_text's first two lines
PERSONS = ("first", "second", "third")
TENSES = ("past", "present")
NUMBERS = ("sentence_mean", "sentence_sd", "paragraph_mean", "mtld")
SAMPLE_WORDS = (60, 160)      # the passage shown to the writer: this many words, at least, most
SAMPLE_SPEECH = 0.4           # the share of dialogue a sample is chosen nearest to
FAVOURED = 8                  # distinctive words kept (and told to the writer)
# Words any story uses, left out of the words to favour (the sample's most distinctive:
# its content words by how often it says them, text.prose.distinctive_words).
COMMON = frozenset("""
said say says saying asked ask know knew known see saw seen come came go went gone going
get got make made think thought look looked looking want wanted take took give gave tell
told feel felt seem seemed turn turned let put keep kept leave left find found call called
begin began hear heard hand hands eyes eye face head man men woman women time times day
days night way thing things nothing something anything everything good great little long
old new well back away yes yet room door house place moment mind life world word words
people first last two three right still own quite rather indeed however sir young away
nothing cannot would could should might must shall will can don't didn't won't it's i'm
""".split())
COMMENTS = {
    "person": "first, second or third: who tells the story",
    "tense": "past or present",
    "sentence_mean": "words per sentence",
    "sentence_sd": "how much sentence lengths vary (standard deviation, words)",
    "paragraph_mean": "words per paragraph",
    "dialogue_share": "share of the words inside quotes, 0 to 1",
    "mtld": "lexical diversity (MTLD): higher, fewer words repeated",
    "punctuation": "marks per 1,000 words",
    "distinctive": "words to favour: the sample's own",
    "avoid": "phrases never to use, beside the built-in list of stock phrases",
    "sample": "a passage the writer is shown, for its voice (not its events)",
    "function_words": "the sample's rate per 1,000 words of each common small word",
}
# A fingerprint's other measures (text.prose.Fingerprint.to_dict), which a style may
# hold too: read, never compared (distance compares only the keys above).
MEASURED = ("words", "sentences", "paragraphs", "person_confidence", "tense_confidence",
            "mattr", "slop_per_1000", "slop", "repeats_per_1000")
KEYS = (*COMMENTS, *MEASURED)


def _number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and v >= 0


def _texts(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


def _rates(v: Any, names: Sequence[str] | None = None) -> str | None:
    """The first key of mapping `v` that is wrong (not in `names`, or its value not a
    number), "" for `v` not a mapping, None when all is well."""
    if not isinstance(v, Mapping):
        return ""
    for key, value in v.items():
        if (names is not None and key not in names) or not _number(value):
            return str(key)
    return None


def check_style(data: Any, path: Path) -> dict[str, Any]:
    """`data` (style.yaml as read) checked key by key: the style, or a FileFormatError
    naming the file, the line and the key that is wrong."""
    def bad(key: str, expected: str, *at: str) -> FileFormatError:
        return FileFormatError(f"'{'.'.join([key, *at])}' must be {expected}: fix the value "
                               "or remove the line", file=str(path),
                               line=yaml_line(path, key, *at))

    if not isinstance(data, Mapping):
        raise FileFormatError(f"expected a mapping of {', '.join(KEYS[:4])}, …",
                              file=str(path), line=1)
    for key, value in data.items():
        if key not in KEYS:
            raise FileFormatError(f"unknown key '{key}' (a style has "
                                  f"{', '.join(COMMENTS)})",
                                  file=str(path), line=yaml_line(path, str(key)))
        if value is None:
            continue
        if key == "person" and value not in PERSONS:
            raise bad(key, " or ".join(PERSONS))
        if key == "tense" and value not in TENSES:
            raise bad(key, " or ".join(TENSES))
        if key in (*NUMBERS, *MEASURED) and not _number(value):
            raise bad(key, "a number, 0 or more")
        if key == "dialogue_share" and not (_number(value) and value <= 1):
            raise bad(key, "a share from 0 to 1")
        if key in ("distinctive", "avoid") and not _texts(value):
            raise bad(key, "a list of text, like [harbour, lamp]")
        if key == "sample" and not isinstance(value, str):
            raise bad(key, "text (a passage)")
        if key in ("punctuation", "function_words"):
            wrong = _rates(value, list(MARKS) if key == "punctuation" else None)
            if wrong == "":
                raise bad(key, "a mapping of rates per 1,000 words")
            if wrong is not None:
                raise bad(key, f"a number per 1,000 words of one of {', '.join(MARKS)}"
                          if key == "punctuation" else "a number per 1,000 words", wrong)
    return {k: v for k, v in data.items() if v is not None}


def read_style(root: Path) -> dict[str, Any] | None:
    """The project's style.yaml (under `root`), checked (check_style); None when there is
    none. An empty file is a style that asks nothing."""
    path = Path(root) / STYLE_FILE
    if not path.is_file():
        return None
    return check_style(read_yaml(path, {}), path)


def pick_sample(texts: Sequence[str], sizes: tuple[int, int] = SAMPLE_WORDS) -> str:
    """A passage of `texts` for the writer: one to three paragraphs in a row, between
    sizes[0] and sizes[1] words, with dialogue and narration both when it can, nearest the
    whole's sentence length, without a stock phrase; the first such of the best. A text
    with no passage that long gives its first paragraphs up to sizes[1] words."""
    paras = [p for text in texts for p in paragraphs(text)]
    lengths = [len(words(s)) for p in paras for s in sentences(p)]
    mean = fmean(lengths) if lengths else 0.0
    best: tuple[float, str] | None = None
    for start in range(len(paras)):
        for end in range(start + 1, min(start + 3, len(paras)) + 1):
            passage = "\n\n".join(paras[start:end])
            n = len(words(passage))
            if n > sizes[1]:
                break
            if n < sizes[0]:
                continue
            said = [len(words(s)) for s in sentences(passage)]
            score = (abs(speech_share(passage) - SAMPLE_SPEECH)
                     + abs(fmean(said) - mean) / max(mean, 1.0)
                     + len(slop_hits(passage)))
            if best is None or score < best[0]:
                best = (score, passage)
    if best is not None:
        return best[1]
    kept: list[str] = []
    for para in paras:
        if kept and len(words("\n\n".join([*kept, para]))) > sizes[1]:
            break
        kept.append(para)
    return "\n\n".join(kept)


def learn(texts: Sequence[str], avoid: Sequence[str] = ()) -> dict[str, Any]:
    """The style of `texts` (an author's sample) as style.yaml holds it (KEYS' order),
    with `avoid` as its phrases to avoid."""
    whole = "\n\n".join(texts)
    fp = fingerprint(whole)
    return {"person": fp.person, "tense": fp.tense, "sentence_mean": fp.sentence_mean,
            "sentence_sd": fp.sentence_sd, "paragraph_mean": fp.paragraph_mean,
            "dialogue_share": fp.dialogue_share, "mtld": fp.mtld,
            "punctuation": dict(fp.punctuation),
            "distinctive": [w for w in fp.distinctive if w not in COMMON][:FAVOURED],
            "avoid": list(avoid), "sample": pick_sample(texts),
            "function_words": dict(fp.function_words)}


def style_text(style: Mapping[str, Any], sources: Sequence[str], words_in: int) -> str:
    """style.yaml's text: a header saying where it was measured from, then each key with
    what it means in a comment (the sample a block, the function words one line)."""
    def flow(key: str, value: Any) -> str:        # "key: value", lists and maps on one line
        if isinstance(value, list | dict):
            text: str = yaml.safe_dump(value, default_flow_style=True, sort_keys=False,
                                       width=float("inf"), allow_unicode=True)
            return f"{key}: " + text.strip()
        text = yaml.safe_dump({key: value}, allow_unicode=True, width=float("inf"))
        return text.strip()

    lines = [f"# The book's style, measured by `novel style learn` from {', '.join(sources)}",
             f"# ({words_in:,} words). Edit any value; delete a key to stop caring about it.",
             ""]
    for key in KEYS:
        if key not in style:
            continue
        value, note = style[key], COMMENTS[key]
        if key == "sample":
            lines += [f"# {note}", "sample: |-"]
            lines += [f"  {line}" if line else "" for line in str(value).splitlines()]
        elif key == "punctuation":
            lines.append(f"punctuation:    # {note}")
            lines += [f"  {mark}: {rate}" for mark, rate in value.items()]
        elif key == "function_words":
            lines += [f"# {note}", flow(key, dict(value))]
        else:
            lines.append(f"{flow(key, value)}    # {note}")
    return "\n".join(lines) + "\n"


def _about(share: float) -> str:
    """A share in words ("about a third")."""
    if share < 0.05:
        return "almost none"
    for limit, said in ((0.15, "a tenth"), (0.28, "a fifth"), (0.4, "a third"),
                        (0.6, "half"), (0.8, "two thirds")):
        if share < limit:
            return f"about {said}"
    return "most"


def style_lines(style: Mapping[str, Any]) -> list[str]:
    """What the writer is told of `style`, a line for each thing it says: person and
    tense, sentence and paragraph length, dialogue, the words to favour."""
    out = []
    person, tense = style.get("person"), style.get("tense")
    voice = ", ".join(p for p in (f"{person} person" if person else "",
                                  f"{tense} tense" if tense else "") if p)
    if voice:
        out.append(f"Tell it in the {voice}.")
    mean, sd = style.get("sentence_mean"), style.get("sentence_sd")
    if _number(mean) and mean:
        spread = (f", most between {max(1, round(mean - sd))} and {round(mean + sd)}"
                  if _number(sd) and sd else "")
        out.append(f"Sentences of about {round(mean)} words{spread}.")
    if _number(style.get("paragraph_mean")) and style["paragraph_mean"]:
        out.append(f"Paragraphs of about {round(style['paragraph_mean'])} words.")
    share = style.get("dialogue_share")
    if _number(share) and float(share or 0) <= 1:
        out.append(f"Dialogue: {_about(float(share or 0))} of the words.")
    favour = [w for w in style.get("distinctive") or [] if w.strip()][:FAVOURED]
    if favour:
        out.append(f"Words to favour: {', '.join(favour)}.")
    return out


def read_samples(files: Sequence[Path]) -> list[str]:
    """The prose of each sample file (front matter left out); a FileFormatError names a
    file that cannot be read as text or holds no words."""
    texts = []
    for path in files:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise FileFormatError("not text (UTF-8): give a sample of prose, .txt or .md",
                                  file=str(path)) from None
        body = parse_front_matter(text, path=path)[1] if text.startswith("---") else text
        if not words(body):
            raise FileFormatError("holds no prose to measure", file=str(path))
        texts.append(body)
    return texts


def learned_text(texts: Sequence[str], sources: Sequence[str], avoid: Sequence[str] = (),
                 was: str | None = None) -> str:
    """style.yaml's text for a sample of `texts` (read from `sources`), `avoid` kept. Over
    `was`, the text the file holds (measured again), the author's comments and key order
    are kept (yaml_comments.keep_comments), its header saying what was measured anew."""
    text = style_text(learn(texts, avoid), sources, sum(len(words(t)) for t in texts))
    head = _HEADER.match(text)
    if was is not None and head is not None:
        was = _HEADER.sub(lambda _: head.group(), was, count=1)
    return keep_comments(was, text, width=math.inf)


def kept_avoid(root: Path) -> list[str]:
    """The phrases the project's style.yaml says to avoid, to keep when it is measured
    again (none when it has none, or they cannot be read)."""
    try:
        data = read_yaml(Path(root) / STYLE_FILE, {})
    except FileFormatError:
        return []
    avoid = data.get("avoid") if isinstance(data, Mapping) else None
    return [p for p in avoid if isinstance(p, str)] if isinstance(avoid, list) else []
