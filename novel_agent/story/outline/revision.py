"""The revision of the rest of an outline at a checkpoint: what the one call is asked,
the JSON schema of its answer, and the outline it makes.

The call rewrites the chapters the revision may change (`slots`: chapter -> its
beats' ids, each with the beat kept or None for one to write, as
tick/stages/outline.regen_slots gives them): a title, a purpose and the beats to
write of each, in order. `revision_from_json` checks the answer (ModelResponseError
listing every problem, which the caller sends back once as a repair request);
`revised` puts it in place: every kept beat stays where it was, the answer's beats
fill the others in order (one it leaves out, or one that copies a scene's summary
line, keeps the beat the outline had, or goes when there was none), and the chapters
keep their numbers and their target lengths, so the book is never made longer. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from novel_agent.errors import ModelResponseError
from novel_agent.story.outline.answers import (
    FIELDS,
    STAGE,
    beat_said,
    short_title,
    title_problem,
    whole,
)
from novel_agent.story.outline.drift import Drift
from novel_agent.story.outline.file import Beat, Chapter, Outline
from novel_agent.story.scenes import Scene

Slots = Mapping[int, Sequence[tuple[str, Beat | None]]]   # chapter -> its beats, kept or None
SHOWN = 12         # of each list the prompt's account of the drift shows, at most


def to_write(slots: Slots) -> dict[int, int]:
    """chapter -> how many beats the answer writes for it."""
    return {n: sum(beat is None for _, beat in held) for n, held in slots.items()}


def schema(slots: Slots) -> dict[str, Any]:
    """The answer's JSON schema: one entry per chapter of `slots`, each a title, a purpose
    and its beats (as many as the chapter with the most to write, at most)."""
    most = max(to_write(slots).values(), default=1)
    beat = {"type": "object", "properties": FIELDS["beats"], "required": ["what"]}
    item = {"type": "object", "required": ["title", "purpose", "beats"], "properties": {
        **FIELDS["chapters"],
        "beats": {"type": "array", "minItems": min(1, most), "maxItems": max(1, most),
                  "items": beat}}}
    return {"type": "object", "required": ["chapters"], "properties": {"chapters": {
        "type": "array", "minItems": len(slots), "maxItems": len(slots), "items": item}}}


def revision_from_json(data: dict[str, Any], slots: Slots,
                       protagonist: str = "") -> list[dict[str, Any]]:
    """The answer's chapters, in the order of `slots`, each {title, purpose, beats: [{what,
    tension}]} (text cleaned, beats past the chapter's count cut; a title that is no title,
    `title_problem`, made of its first beat); a ModelResponseError names every problem."""
    wanted = to_write(slots)
    items, problems, out = data.get("chapters"), [], []
    if not isinstance(items, list):
        raise ModelResponseError(f"{STAGE}: the revision needs a list 'chapters'", stage=STAGE,
                                 raw=str(data)[:2000])
    if len(items) < len(slots):
        problems.append(f"{len(slots)} chapters were asked for, {len(items)} given")
    for number, item in zip(sorted(slots), items):
        if not isinstance(item, dict):
            problems.append(f"chapter {number} must be an object")
            continue
        missing = [k for k in FIELDS["chapters"] if not _said(item.get(k))]
        problems += [f"chapter {number}: '{k}' must be text" for k in missing]
        beats = [b for b in item.get("beats") or [] if isinstance(b, dict) and _said(b.get("what"))]
        if wanted[number] and not beats:
            problems.append(f"chapter {number}: 'beats' must list what happens")
        if not missing:
            title = whole("title", item["title"])
            if beats and title_problem(title, protagonist):      # a description: no title
                title = short_title(whole("what", beats[0]["what"]))
            out.append({"title": title,
                        "purpose": whole("purpose", item["purpose"]),
                        "beats": [beat_said(whole("what", b["what"]), b.get("tension"))
                                  for b in beats[:wanted[number]]]})
    if problems:
        raise ModelResponseError(f"{STAGE}: the revision is unusable: {'; '.join(problems[:6])}",
                                 stage=STAGE, raw=str(data)[:2000])
    return out


def _said(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


COPY_SHARE = 0.8     # a beat with this share of its three-word runs in one summary line copies it


def copies_summary(what: str, summaries: Sequence[str]) -> bool:
    """Whether a beat's `what` is (nearly) one of the scenes' summary lines `summaries`:
    the same words (case and marks aside), or, of four words or more, COPY_SHARE of its
    three-word runs found in one line. The 1.5B's revision after scene 3 made beats 2.1
    and 2.2 the summary lines of scene 2: the book, told to do again what it had done,
    did (the same cave, crack and crystal ball in five scenes).

    >>> copies_summary("Ines finds the crack in the cave wall.",
    ...                ["Ines finds the crack in the cave wall and the ball."])
    True
    >>> copies_summary("Ines takes the apple to the mayor.", ["Ines finds the crack."])
    False
    """
    words = _words(what)
    for line in summaries:
        said = _words(line)
        if words and words == said:
            return True
        grams = _grams(words)
        if len(words) >= 4 and grams and len(grams & _grams(said)) >= COPY_SHARE * len(grams):
            return True
    return False


def _words(text: str) -> list[str]:
    return re.findall(r"[\w']+", text.casefold())


def _grams(words: Sequence[str]) -> set[tuple[str, ...]]:
    return {tuple(words[i:i + 3]) for i in range(len(words) - 2)}


def copied_beats(answers: Sequence[Mapping[str, Any]], summaries: Sequence[str]) -> list[str]:
    """The beats of `answers` that copy a summary line (`copies_summary`), in order."""
    return [b["what"] for a in answers for b in a["beats"] if copies_summary(b["what"], summaries)]


def revised(outline: Outline, slots: Slots, answers: Sequence[Mapping[str, Any]],
            summaries: Sequence[str] = ()) -> Outline:
    """`outline` with the chapters of `slots` (in order) as `answers` rewrite them; a beat
    of the answer that copies one of the scenes' summary lines `summaries` is refused (the
    beat the outline had stays, or none when it had none)."""
    new: dict[int, Chapter] = {}
    for number, answer in zip(sorted(slots), answers):
        chapter = outline.chapter(number)
        assert chapter is not None, f"no chapter {number} to revise"
        old = {b.id: b for b in chapter.beats}
        given = iter(answer["beats"])
        beats = []
        for beat_id, kept in slots[number]:
            said = kept or next(given, None)
            if isinstance(said, Mapping) and copies_summary(said["what"], summaries):
                said = None
            if isinstance(said, Beat):
                beats.append(said)
            elif said is not None:
                beats.append(Beat(beat_id, said["what"], said.get("tension")))
            elif beat_id in old:
                beats.append(old[beat_id])
        new[number] = replace(chapter, title=answer["title"], purpose=answer["purpose"],
                              beats=tuple(beats))
    return replace(outline, acts=tuple(replace(a, chapters=tuple(
        new.get(c.number, c) for c in a.chapters)) for a in outline.acts))


def account(drift: Drift, scenes: Sequence[Scene]) -> str:
    """What happened since the last checkpoint, for the prompt: the scenes of the chapters
    closed (their summaries), the beats that landed, those missed or done out of order,
    and the new threads."""
    lines = [f"Chapter{'s' if len(drift.closed) != 1 else ''} "
             f"{', '.join(map(str, drift.closed))} closed; the book goes on to chapter "
             f"{drift.chapter}. What the scenes did:"]
    window = [s for s in scenes if s.chapter in drift.closed][-SHOWN:]
    lines += [f"- scene {s.tick}, \"{s.title}\": {' '.join(s.summary) or s.title}"
              for s in window]
    for title, beats in (("Beats that landed", drift.landed), ("Beats missed", drift.missed),
                         ("Beats done before an earlier one", drift.out_of_order)):
        if beats:
            lines += ["", f"{title}:"] + [f"- {b.id} {b.what}" for b in beats[:SHOWN]]
    if drift.threads:
        lines += ["", "New threads no beat covers:"] + [f"- {t}" for t in drift.threads[:SHOWN]]
    return "\n".join(lines)


def chapters_text(outline: Outline, slots: Slots) -> str:
    """The chapters to rewrite, for the task: each with how many beats to write and the
    beats it keeps."""
    lines = []
    for number in sorted(slots):
        chapter = outline.chapter(number)
        count = sum(beat is None for _, beat in slots[number])
        kept = [f"{b.id} {b.what}" for _, b in slots[number] if b is not None]
        lines.append(f"- chapter {number} (now \"{chapter.title if chapter else ''}\"): "
                     f"{count} beat{'' if count == 1 else 's'} to write"
                     + (f"; it keeps {'; '.join(kept)}" if kept else ""))
    return "\n".join(lines)
