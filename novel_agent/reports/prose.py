"""The prose numbers of a book, scene by scene and chapter by chapter, without a model.

Per scene (text.prose measures its body): slop per 1,000 words (the built-in phrase
list plus the project's `style.avoid`), repeated 3- to 5-grams per 1,000 words within
the scene and those taken from the last ECHO_SCENES scenes ("echoes"), lexical
diversity (MTLD), sentence length (mean and spread), dialogue share, and, when the
project has a `style.yaml`, the distance from it and its farthest part. Per chapter
(the chapters `novel export` cuts: the outline's, else the checkpoints'), the same over
the chapter's text. For the book: each measure's mean, its degradation (the last
quarter of the scenes against the first) and the phrases used most.

A text's numbers are kept in the index (`prose_numbers`, by a hash of the text, the
phrase list and VERSION; a scene's echoes by the hashes of the scenes before it too),
so a book is measured once and `novel stats` on it stays quick; the distance is worked
out each time from the kept fingerprint, so an edit of style.yaml shows at once.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from statistics import fmean
from typing import Any

from novel_agent.books.book import Chapter
from novel_agent.books.export import chapters_of
from novel_agent.errors import NovelError
from novel_agent.index.db import Index
from novel_agent.story import style as story_style
from novel_agent.story.project.folder import Project
from novel_agent.story.scenes import Scene, load_scenes
from novel_agent.text.prose import (
    Fingerprint,
    PhraseList,
    degradation,
    distance,
    fingerprint,
    ngrams,
    per_thousand,
    phrase_list,
    repeats_across,
    slop_hits,
)

STYLE_FILE = story_style.STYLE_FILE
ECHO_SCENES = 5         # a scene's n-grams are looked for in this many scenes before it
VERSION = "prose-1"     # change it when a measure changes: kept numbers are made again
OVERUSED = 5            # the phrases named as the book's most used
# The measures a scene and a chapter have, and degradation compares (name: what it is).
MEASURES: dict[str, str] = {
    "slop_per_1000": "slop phrases per 1,000 words",
    "repeats_per_1000": "repeated 3- to 5-grams per 1,000 words, within the text",
    "echoes_per_1000": f"3- to 5-grams from the last {ECHO_SCENES} scenes, per 1,000 words",
    "mtld": "lexical diversity (MTLD)",
    "sentence_mean": "words per sentence",
    "sentence_sd": "sentence-length spread (standard deviation, words)",
    "dialogue_share": "share of the words inside quotes",
    "distance": "distance from style.yaml, 0-1",
}


@dataclass
class ProseNumbers:
    """One scene's or chapter's prose numbers (None where there is nothing to say: no
    style.yaml, no scene before it)."""

    words: int = 0
    slop: int = 0
    slop_per_1000: float = 0.0
    repeats_per_1000: float = 0.0
    echoes_per_1000: float | None = None
    mtld: float = 0.0
    sentence_mean: float = 0.0
    sentence_sd: float = 0.0
    dialogue_share: float = 0.0
    distance: float | None = None
    farthest: str | None = None         # the distance's farthest part ("tense", …)


@dataclass
class ChapterNumbers:
    """A chapter's title, its scenes' ticks and its numbers."""

    title: str
    first: int
    last: int
    numbers: ProseNumbers


@dataclass
class ProseReport:
    """A book's prose numbers."""

    scenes: dict[int, ProseNumbers] = field(default_factory=dict)
    chapters: list[ChapterNumbers] = field(default_factory=list)
    style: bool = False                    # whether the project has a style.yaml
    overused: list[tuple[str, int]] = field(default_factory=list)

    def series(self, name: str) -> list[Any]:
        """One measure of every scene, in tick order."""
        return [getattr(n, name) for _, n in sorted(self.scenes.items())]

    def summary(self) -> dict[str, Any]:
        """Each measure's mean and last over the scenes, and its degradation."""
        out: dict[str, Any] = {"scenes": len(self.scenes), "style": self.style,
                               "overused": [list(p) for p in self.overused]}
        for name in MEASURES:
            values = [v for v in self.series(name) if v is not None]
            worse = degradation(values)
            out[name] = {"mean": round(fmean(values), 4) if values else None,
                         "last": values[-1] if values else None,
                         "degradation": worse._asdict() if worse else None}
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"summary": self.summary(),
                "chapters": [{"title": c.title, "first": c.first, "last": c.last,
                              **asdict(c.numbers)} for c in self.chapters]}


def read_style(project: Project) -> dict[str, Any] | None:
    """The project's style.yaml as a mapping (None when there is none), every key checked
    (story/style.py: a mistake is a FileFormatError naming the file, the line and the
    key); the keys read here are `avoid` (phrases) and a fingerprint's
    (text.prose.Fingerprint)."""
    return story_style.read_style(project.root)


def _hash(*parts: str) -> str:
    digest = hashlib.sha1()
    for part in parts:
        digest.update(part.encode("utf-8") + b"\0")
    return digest.hexdigest()


class _Kept:
    """The index's kept numbers: those asked for, read at once; new ones, written at the
    end (nothing kept when the index cannot be written: the numbers are made again)."""

    def __init__(self, path: Path, keys: Sequence[str]):
        self.path, self.new = path, dict[str, Any]()
        try:
            index = Index(path)
            try:
                self.old: dict[str, Any] = {k: json.loads(v)
                                        for k, v in index.prose_numbers(keys).items()}
            finally:
                index.close()
        except (sqlite3.Error, OSError, ValueError):
            self.old = {}

    def get(self, key: str) -> Any:
        return self.old.get(key)

    def put(self, key: str, value: Any) -> None:
        self.new[key] = value

    def save(self) -> None:
        if not self.new:
            return
        try:
            index = Index(self.path)
            try:
                index.put_prose_numbers({k: json.dumps(v) for k, v in self.new.items()})
            finally:
                index.close()
        except (sqlite3.Error, OSError):
            pass           # a busy or read-only index: the numbers are made again next time


def _numbers(fp: Fingerprint, echoes: int | None, style: Mapping[str, Any] | None) -> ProseNumbers:
    far = distance(fp, style) if style else None
    return ProseNumbers(
        words=fp.words, slop=fp.slop, slop_per_1000=fp.slop_per_1000,
        repeats_per_1000=fp.repeats_per_1000,
        echoes_per_1000=None if echoes is None else per_thousand(echoes, fp.words),
        mtld=fp.mtld, sentence_mean=fp.sentence_mean, sentence_sd=fp.sentence_sd,
        dialogue_share=fp.dialogue_share,
        distance=far.total if far and far.parts else None,
        farthest=far.worst() if far and far.parts and far.total else None)


def prose_report(project: Project, scenes: Sequence[Scene] | None = None) -> ProseReport:
    """The book's prose numbers (see the module's docstring); `scenes` when the caller
    has read them already."""
    scenes = list(load_scenes(project.scenes_dir) if scenes is None else scenes)
    if not scenes:
        return ProseReport()
    style = read_style(project)
    phrases = phrase_list((style or {}).get("avoid") or [])
    salt = _hash(VERSION, *phrases.phrases)
    bodies = [_hash(s.body) for s in scenes]
    chapters = _chapters(project, scenes)
    scene_keys = [_hash(salt, *bodies[max(0, i - ECHO_SCENES):i + 1]) for i in range(len(scenes))]
    chapter_keys = [_hash(salt, "chapter", *(_hash(s.body) for s in c.scenes)) for c in chapters]
    kept = _Kept(project.index_db, scene_keys + chapter_keys)
    grams: dict[int, Counter] = {}

    def grams_of(i: int) -> Counter:
        if i not in grams:
            grams[i] = ngrams(scenes[i].body)
        return grams[i]

    report = ProseReport(style=style is not None)
    for i, (scene, key) in enumerate(zip(scenes, scene_keys)):
        known = kept.get(key)
        if known is None:
            echoes = repeats_across(grams_of(i), (grams_of(j) for j in
                                                  range(max(0, i - ECHO_SCENES), i))) if i else None
            known = {"fp": fingerprint(scene.body, phrases).to_dict(), "echoes": echoes}
            kept.put(key, known)
        report.scenes[scene.tick] = _numbers(Fingerprint.from_dict(known["fp"]),
                                             known["echoes"], style)
    for chapter, key in zip(chapters, chapter_keys):
        known = kept.get(key)
        if known is None:
            known = {"fp": fingerprint("\n\n".join(s.body for s in chapter.scenes),
                                       phrases).to_dict()}
            kept.put(key, known)
        report.chapters.append(ChapterNumbers(chapter.title, chapter.scenes[0].tick,
                                              chapter.scenes[-1].tick,
                                              _numbers(Fingerprint.from_dict(known["fp"]),
                                                       None, style)))
    kept.save()
    report.overused = _overused(scenes, phrases, report)
    return report


def _chapters(project: Project, scenes: list[Scene]) -> list[Chapter]:
    """The chapters `novel export` cuts (the checkpoints' when the outline cannot be
    read: `novel doctor` says why)."""
    try:
        return chapters_of(project, scenes, "auto")
    except (NovelError, OSError):
        return chapters_of(project, scenes, "checkpoints")


def _overused(scenes: list[Scene], phrases: PhraseList,
              report: ProseReport) -> list[tuple[str, int]]:
    """The phrases used most over the book (only scenes with a hit are read again)."""
    counts: Counter[str] = Counter()
    for scene in scenes:
        if report.scenes[scene.tick].slop:
            counts.update(hit.phrase for hit in slop_hits(scene.body, phrases))
    return counts.most_common(OVERUSED)
