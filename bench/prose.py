"""Issue 41's table: the prose numbers of human prose beside a model's, side by side.

    .venv/bin/python -m bench.prose                                  # Austen and a stress book
    .venv/bin/python -m bench.prose --book plain=DIR --book styled=DIR   # + embedded books
    .venv/bin/python -m bench.prose --chapters 3 --stress 6          # a quick look

Corpora, each a column:
- Jane Austen's six novels (bench/austen.py reads them from Debian's r-cran-janeaustenr),
  as chapters, and cut into passages of about a scene's length (PASSAGE words, at
  paragraph ends), since the numbers of repetition grow with a text's length and a
  scene is a tenth of a chapter: the passages are the reference the books are held to;
- a stress book: tests/support/stress_model.py's answers, in-process (the offline path
  of bench/long_run.py), --stress scenes;
- each --book LABEL=DIR: a scenes folder (`scenes/` of a project, or the project), such
  as the embedded model's 10-scene book without and with a learned style.

Each measure is the mean over a column's texts (slop over all its words); "echoes" are
the 3- to 5-grams a text takes from the ECHO texts before it (within one novel).
"distance from Austen" is each text's text.prose.distance from the Austen passages'
mean style. Below the table, each book's gap to Austen's passages, and, with two books
or more, how much of the first book's gap each later one closed (the issue's goal: half,
for slop and repeated n-grams).
"""

from __future__ import annotations

import argparse
import logging
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from statistics import fmean
from typing import Any

from bench import austen
from bench.long_run import book, opened
from novel_agent.story.scenes import load_scenes
from novel_agent.text.prose import (
    Fingerprint,
    distance,
    fingerprint,
    ngrams,
    paragraphs,
    per_thousand,
    repeats_across,
    words,
)
from novel_agent.tick.pipeline import tick

PASSAGE = 350          # words in an Austen passage, about a scene's
ECHO = 5               # texts before a text that its n-grams are looked for in
# The rows: name, how a value is written, and whether a gap to Austen is shown for it.
ROWS: list[tuple[str, str, str, bool]] = [
    ("texts", "texts", "{:,.0f}", False),
    ("words", "words per text", "{:,.0f}", False),
    ("slop", "slop per 1,000 words", "{:.2f}", True),
    ("repeats", "repeated 3-5-grams per 1,000 words", "{:.1f}", True),
    ("echoes", f"3-5-grams from the last {ECHO} texts per 1,000", "{:.1f}", True),
    ("mtld", "MTLD (lexical diversity)", "{:.1f}", True),
    ("mattr", "moving-average TTR (50 words)", "{:.3f}", True),
    ("sentence_mean", "words per sentence", "{:.1f}", True),
    ("sentence_sd", "sentence-length spread (sd)", "{:.1f}", True),
    ("paragraph_mean", "words per paragraph", "{:.1f}", True),
    ("dialogue_share", "dialogue share", "{:.0%}", True),
    ("first_person", "first-person texts", "{:.0%}", False),
    ("past_tense", "past-tense texts", "{:.0%}", False),
    ("distance", "distance from Austen's style", "{:.3f}", True),
]
GOAL = ("slop", "repeats")      # the goal: halfway to Austen on these


@dataclass
class Corpus:
    """A column: its texts, grouped by book (echoes stay within a book)."""

    label: str
    books: list[list[str]]
    fingerprints: list[Fingerprint] = field(default_factory=list)
    echoes: list[int | None] = field(default_factory=list)

    @property
    def texts(self) -> list[str]:
        return [text for texts in self.books for text in texts]


def passages(chapter: str, size: int = PASSAGE) -> list[str]:
    """A chapter cut at paragraph ends into passages of at least `size` words (the last
    one joins the one before when it is shorter than half that)."""
    out: list[list[str]] = [[]]
    count = 0
    for para in paragraphs(chapter):
        out[-1].append(para)
        count += len(words(para))
        if count >= size:
            out.append([])
            count = 0
    if len(out) > 1 and sum(len(words(p)) for p in out[-1]) < size / 2:
        last = out.pop()
        out[-1] += last
    return ["\n\n".join(p) for p in out if p]


def austen_corpora(folder: Path, chapters: int | None) -> list[Corpus]:
    """Austen as chapters and as passages (the first `chapters` of each novel, or all)."""
    novels = [austen.chapters(lines)[:chapters] for lines in austen.novels(folder).values()]
    return [Corpus("Austen, chapters", novels),
            Corpus(f"Austen, {PASSAGE}-word passages",
                   [[p for chapter in novel for p in passages(chapter)] for novel in novels])]


def stress_corpus(scenes: int) -> Corpus:
    """A stress book of `scenes` scenes, ticked in-process."""
    logging.getLogger("novel_agent").setLevel(logging.ERROR)    # its thin summaries' warnings
    with tempfile.TemporaryDirectory() as folder:
        project = book(Path(folder) / "stress", True, 8192, "balanced")
        with opened(project, True) as session:
            for _ in range(scenes):
                tick(session)
        texts = [s.body for s in load_scenes(project.scenes_dir)]
    return Corpus(f"stress book ({scenes} scenes)", [texts])


def book_corpus(spec: str) -> Corpus:
    """`LABEL=DIR`: the scenes of a project or of its scenes folder."""
    label, _, where = spec.partition("=")
    if not where:
        label, where = Path(spec).name, spec
    folder = Path(where)
    folder = folder / "scenes" if (folder / "scenes").is_dir() else folder
    texts = [s.body for s in load_scenes(folder)]
    if not texts:
        raise SystemExit(f"--book {spec}: no scene_NNN.md in {folder}")
    return Corpus(label, [texts])


def measure(corpus: Corpus) -> None:
    """Each text's fingerprint, and its echoes of the ECHO texts before it in its book."""
    for texts in corpus.books:
        grams = [ngrams(text) for text in texts]
        for i, text in enumerate(texts):
            corpus.fingerprints.append(fingerprint(text))
            corpus.echoes.append(repeats_across(grams[i], grams[max(0, i - ECHO):i])
                                 if i else None)


def mean_style(fps: Sequence[Fingerprint]) -> dict[str, Any]:
    """The style a set of texts shares: each number's mean, the person and tense most of
    them have, the mean rate of each mark and function word."""
    style: dict[str, Any] = {name: fmean(getattr(fp, name) for fp in fps) for name in (
        "sentence_mean", "sentence_sd", "paragraph_mean", "dialogue_share", "mtld")}
    for name in ("person", "tense"):
        style[name] = Counter(getattr(fp, name) for fp in fps).most_common(1)[0][0]
    for name in ("punctuation", "function_words"):
        keys = {k for fp in fps for k in getattr(fp, name)}
        style[name] = {k: fmean(getattr(fp, name).get(k, 0.0) for fp in fps) for k in keys}
    return style


def row_values(corpus: Corpus, reference: dict[str, Any] | None) -> dict[str, float | None]:
    """The column's value of each row."""
    fps = corpus.fingerprints
    n_words = sum(fp.words for fp in fps)
    echoes = [per_thousand(e, fp.words) for e, fp in zip(corpus.echoes, fps) if e is not None]
    out: dict[str, float | None] = {
        "texts": len(fps), "words": n_words / len(fps),
        "slop": per_thousand(sum(fp.slop for fp in fps), n_words),
        "repeats": fmean(fp.repeats_per_1000 for fp in fps),
        "echoes": fmean(echoes) if echoes else None,
        "first_person": fmean(fp.person == "first" for fp in fps),
        "past_tense": fmean(fp.tense == "past" for fp in fps),
        "distance": fmean(distance(fp, reference).total for fp in fps) if reference else None}
    for name in ("mtld", "mattr", "sentence_mean", "sentence_sd", "paragraph_mean",
                 "dialogue_share"):
        out[name] = fmean(getattr(fp, name) for fp in fps)
    return out


def _cell(value: float | None, form: str) -> str:
    return "—" if value is None else form.format(value)


def table(columns: list[tuple[str, dict[str, float | None]]]) -> list[str]:
    """The measures as rows, a column per corpus."""
    width = max(len(label) for _, label, _, _ in ROWS) + 2
    cells = [max(12, len(label) + 2) for label, _ in columns]
    lines = ["".join([f"{'':<{width}}", *(f"{label:>{w}}" for (label, _), w
                                          in zip(columns, cells))])]
    for key, label, form, _ in ROWS:
        lines.append("".join([f"{label:<{width}}", *(f"{_cell(values[key], form):>{w}}" for
                                                     (_, values), w in zip(columns, cells))]))
    return lines


def gaps(reference: dict[str, float | None], models: list[tuple[str, dict[str, float | None]]],
         books: list[tuple[str, dict[str, float | None]]]) -> list[str]:
    """Each model's book's gap to the reference on the rows that have one, and how much
    of the first --book's gap each later one closed."""
    lines = []
    for label, values in models:
        parts = [f"{key} {_signed(values[key], reference[key], form)}"
                 for key, _, form, gap in ROWS if gap and values[key] is not None
                 and reference[key] is not None]
        lines.append(f"{label}, against Austen's passages: " + ", ".join(parts))
    if len(books) >= 2:
        first = books[0][1]
        for label, values in books[1:]:
            closed = []
            for key in GOAL:           # lower is better on both: no gap when at or under
                before, after, target = first[key], values[key], reference[key]
                if before is None or after is None or target is None:
                    continue
                closed.append(f"{key} {(before - after) / (before - target):.0%}"
                              if before > target else f"{key} no gap (already at Austen's)")
            lines.append(f"{label} closed of {books[0][0]}'s gap to Austen: "
                         + ", ".join(closed) + " (the goal: 50% or more)")
    return lines


def _signed(value: float | None, reference: float | None, form: str) -> str:
    assert value is not None and reference is not None
    diff = value - reference
    text = form.format(abs(diff))
    return ("+" if diff >= 0 else "−") + text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--austen", type=Path, default=austen.DATA,
                        help="the janeaustenr data folder")
    parser.add_argument("--chapters", type=int, default=None,
                        help="only the first N chapters of each novel")
    parser.add_argument("--stress", type=int, default=40, help="scenes of the stress book")
    parser.add_argument("--book", action="append", default=[], metavar="LABEL=DIR",
                        help="a book's scenes folder (or project); repeat for more")
    args = parser.parse_args()
    started = time.monotonic()
    corpora: list[Corpus] = []
    try:
        corpora += austen_corpora(args.austen, args.chapters)
    except FileNotFoundError as exc:
        print(f"Austen left out: {exc}")
    if args.stress:
        corpora.append(stress_corpus(args.stress))
    books = [book_corpus(spec) for spec in args.book]
    corpora += books
    if not args.book:
        print("embedded books left out: give each as --book LABEL=DIR (a project or its "
              "scenes folder, e.g. the embedded model's 10-scene book without and with style)")
    for corpus in corpora:
        measure(corpus)
    passages_ = next((c for c in corpora if c.label.startswith("Austen, ") and
                      "passages" in c.label), None)
    reference = mean_style(passages_.fingerprints) if passages_ else None
    columns = [(c.label, row_values(c, reference)) for c in corpora]
    print(f"prose numbers, without a model, in {time.monotonic() - started:.0f} s")
    for line in table(columns):
        print(line)
    if passages_ is not None and len(corpora) > 2:
        print()
        for line in gaps(columns[corpora.index(passages_)][1], columns[2:],
                         columns[len(corpora) - len(books):]):
            print(line)


if __name__ == "__main__":
    main()
