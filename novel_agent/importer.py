"""The manuscript in: `novel import` brings an existing text into a project. Prints nothing.

    manuscript = load_manuscript(path, split, max_words)   # read and split; writes nothing
    result = import_manuscript(session, manuscript, extract=True, on_progress=...)

Each piece becomes the next tick, T = (the last tick or scene on disk) + 1, and
goes through the tick's own machinery: the extractor's prompt is built by
`stage_prompts.build_extractor`, answered by `stages.extract`, and the scene,
a plan record, memory, the state and the prompt log land in one
`commit_tick` (all or nothing); then `summarize.after_commit` makes the
checkpoints and arcs owed, as after a tick. Without extraction the scenes land
with their titles as summaries, and no model is called.

An import has no planner, so its Plan is made from the piece: the title, the
intention "Imported scene N: <first sentence>", as POV the known character
the piece names most (else the project's protagonist if the piece names them,
else none), as location the known place it names most (else none), and as
characters the known ones it names. The extractor sees "unknown" where
there is none. Characters the extractor names are created when the name is
plausible (`names.name_problem`) and written in the piece, so a guess such as
"Someone" never becomes a person; their state is then set by `stages.extract.apply`.

Resume: `.novel/state.yaml` holds `import:` (source, sha256 of its text,
split mode, max_words, pieces, done, first tick), committed with each piece.
A run with the same source, text and split continues after the pieces done
(split again with the recorded max_words); a finished one does nothing; any
other import is appended after the scenes already there.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from .decisions import Extraction, Plan
from .errors import ImportStoppedError, ManuscriptError, ModelError
from .manuscript import ImportedScene, read_manuscript, split_manuscript
from .memory import Memory, load_memory, upsert_character
from .names import name_problem
from .project import Project, Story
from .prompt_log import log_path, log_text
from .scenes import Scene, scene_ticks, word_count
from .session import Session
from .stage_prompts import build_extractor
from .stages import extract as extract_stage, summarize
from .stages.commit import commit_tick

UNKNOWN = "unknown"      # what the extractor's prompt says when the POV or place is not known


@dataclass(frozen=True)
class Manuscript:
    """A manuscript read and split: where it came from, its text's sha256, its pieces."""

    source: str
    sha256: str
    split: str
    max_words: int
    text: str
    pieces: list[ImportedScene]


def load_manuscript(path: Path | str, split: str = "auto", max_words: int = 400) -> Manuscript:
    """Read and split a manuscript (a file or a folder); ManuscriptError if it cannot be."""
    text = read_manuscript(path)
    if not word_count(text):
        raise ManuscriptError(f"{path}: no text to import")
    return Manuscript(source=str(Path(path).expanduser().resolve()),
                      sha256=hashlib.sha256(text.encode("utf-8")).hexdigest(), split=split,
                      max_words=max_words, text=text,
                      pieces=split_manuscript(text, split, max_words))


@dataclass
class ImportProgress:
    """One piece landed (or, with `tick` 0, where a resumed import starts)."""

    done: int            # pieces of the manuscript imported so far, this one included
    total: int
    tick: int = 0
    title: str = ""
    words: int = 0
    changes: list[str] = field(default_factory=list)
    summary: summarize.SummaryReport | None = None


@dataclass
class ImportResult:
    """What a run of `novel import` did."""

    total: int                  # pieces in the manuscript
    skipped: int                # already imported by an earlier run
    ticks: list[int] = field(default_factory=list)   # the ticks this run wrote
    words: int = 0
    characters: int = 0         # characters in memory afterwards
    checkpoints: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


OnProgress = Callable[[ImportProgress], None]


# -- where an import starts ------------------------------------------------------
def next_tick(project: Project) -> int:
    """The next tick: after the tick counter and after every scene on disk."""
    return max([project.tick(), *scene_ticks(project.scenes_dir)]) + 1


def same_import(record: Any, m: Manuscript) -> bool:
    """Is the state's `import:` record this manuscript, split the same way?"""
    return (isinstance(record, dict) and record.get("source") == m.source
            and record.get("sha256") == m.sha256 and record.get("split") == m.split)


def resume(project: Project, m: Manuscript) -> tuple[Manuscript, int]:
    """The manuscript as the earlier run split it, and how many pieces it imported
    (0 for a new import)."""
    record = project.state().get("import")
    if not same_import(record, m):
        return m, 0
    max_words = int(record.get("max_words") or m.max_words)
    if max_words != m.max_words:
        m = Manuscript(m.source, m.sha256, m.split, max_words, m.text,
                       split_manuscript(m.text, m.split, max_words))
    return m, min(int(record.get("done") or 0), len(m.pieces))


# -- guessing the plan -------------------------------------------------------------
def mentions(entities: Iterable[dict[str, Any]], text: str) -> list[str]:
    """Names of the entities `text` mentions (by name, alias or a full name's first
    word), most mentioned first."""
    counts: Counter[str] = Counter()
    for entity in entities:
        name = str(entity.get("name") or "").strip()
        forms = {name, *map(str, entity.get("aliases") or [])}
        if len(name.split()) > 1 and len(name.split()[0]) > 2:
            forms.add(name.split()[0])
        hits = sum(len(re.findall(rf"\b{re.escape(f)}\b", text)) for f in forms if f.strip())
        if name and hits:
            counts[name] = hits
    return [name for name, _ in counts.most_common()]


def first_sentence(body: str) -> str:
    """The piece's first sentence (at most 160 characters), for its intention."""
    flat = " ".join(body.split())
    match = re.search(r"^.+?[.!?…](?=\s|$)", flat)
    return (match.group(0) if match else flat)[:160]


def guess_plan(piece: ImportedScene, number: int, memory: Memory, story: Story) -> Plan:
    """The plan an imported piece stands for (see the module docstring)."""
    cast = mentions(memory.characters.values(), piece.body)
    protagonist = story.protagonist.split(",")[0].strip()
    if not cast and protagonist and mentions([{"name": protagonist}], piece.body):
        cast = [protagonist]
    places = mentions(memory.locations.values(), piece.body)
    return Plan(intention=f"Imported scene {number}: {first_sentence(piece.body)}",
                pov=cast[0] if cast else "", location=places[0] if places else "",
                title=piece.title[:80], characters=cast[:8])


def create_cast(memory: Memory, extraction: Extraction, body: str, tick: int,
                check: Callable[[str], str | None]) -> list[str]:
    """Create the characters the extractor names that memory does not know yet, when the
    name is plausible and written in the piece. Returns what changed, one line each."""
    created = []
    for item in extraction.characters:
        name = item["name"]
        if memory.find_character(name) or check(name) or not re.search(
                rf"\b{re.escape(name.split()[0])}\b", body):
            continue
        _, new = upsert_character(memory, name, tick=tick, state=item.get("state", ""))
        if new:
            created.append(f"new character: {name}")
    return created


# -- one piece ---------------------------------------------------------------------
@dataclass
class _Landed:
    scene: Scene
    changes: list[str]
    summary: summarize.SummaryReport | None


def _record(m: Manuscript, done: int, first_tick: int) -> dict[str, Any]:
    return {"source": m.source, "sha256": m.sha256, "split": m.split, "max_words": m.max_words,
            "pieces": len(m.pieces), "done": done, "first_tick": first_tick}


def _extracted(session: Session, memory: Memory, plan: Plan, body: str,
               tick: int) -> tuple[Extraction, list[str], dict]:
    """Ask the extractor about one piece and apply its answer to `memory`."""
    story, gen = session.project.story(), session.config.generation
    shown = Plan(plan.intention, plan.pov or UNKNOWN, plan.location or UNKNOWN, plan.title,
                 plan.characters)
    session.source.story, session.source.memory = story, memory
    session.source.plan, session.source.prose = shown, body
    built = build_extractor(session, story=story, memory=memory, plan=shown, prose=body,
                            tick=tick)
    extraction, _ = extract_stage.run(session.model, built.messages,
                                max_tokens=session.config.max_tokens("extractor"))
    check = lambda name: name_problem(name, title=story.title or story.name,  # noqa: E731
                                      premise=story.premise)
    changes = create_cast(memory, extraction, body, tick, check) if gen.enable_entity_updates \
        else []
    changes += extract_stage.apply(memory, extraction, tick=tick, facts=gen.enable_fact_extraction,
                             entities=gen.enable_entity_updates)
    return extraction, changes, {log_path(session.project, tick, "extractor"): log_text(built)}


def land(session: Session, m: Manuscript, index: int, first_tick: int, memory: Memory,
         extract_on: bool) -> _Landed:
    """Import piece `index` as the next tick: extract (if on), commit, summarize."""
    project, piece = session.project, m.pieces[index]
    tick = next_tick(project)
    session.at_tick(tick)
    before = memory.copy()
    plan = guess_plan(piece, index + 1, memory, project.story())
    extraction, changes, logs = Extraction(summary=[piece.title]), [], {}
    if extract_on:
        extraction, changes, logs = _extracted(session, memory, plan, piece.body, tick)
    cast = mentions(memory.characters.values(), piece.body)[:8] or plan.characters
    places = mentions(memory.locations.values(), piece.body)
    scene = Scene(tick=tick, body=piece.body, title=piece.title, pov=plan.pov or
                  (cast[0] if cast else ""), location=plan.location or (places[0] if places
                                                                         else ""),
                  characters=cast, summary=list(extraction.summary),
                  words=word_count(piece.body), tokens=session.counter.count(piece.body))
    record = {"tick": tick, **plan.to_dict(), "imported": {
        "source": m.source, "piece": index + 1, "of": len(m.pieces), "chapter": piece.chapter},
        "extraction": extraction.to_dict() if extract_on else None, "memory_changes": changes}
    state = {**project.state(), "tick": tick, "import": _record(m, index + 1, first_tick)}
    state.pop("writer_tiers", None)     # the next tick's tiers start from the new scenes
    commit_tick(project, scene, record, memory, before, state, extra=logs)
    report = summarize.after_commit(session, tick, memory=memory) if extract_on else None
    return _Landed(scene, changes, report)


# -- the whole import --------------------------------------------------------------
def import_manuscript(session: Session, manuscript: Manuscript, *, extract: bool = True,
                      on_progress: OnProgress | None = None) -> ImportResult:
    """Import the pieces not yet imported, in order, one commit each (the caller holds
    the project's lock). A model failure raises ImportStoppedError; what landed stays."""
    project = session.project
    m, done = resume(project, manuscript)
    record = project.state().get("import")
    first = int(record.get("first_tick") or 0) if done else next_tick(project)
    result = ImportResult(total=len(m.pieces), skipped=done)
    emit = on_progress or (lambda progress: None)
    emit(ImportProgress(done, len(m.pieces)))
    memory = load_memory(project.memory_dir)
    try:
        for index in range(done, len(m.pieces)):
            landed = _land_or_stop(session, m, index, first, memory, extract, result)
            _count(result, landed)
            emit(ImportProgress(index + 1, len(m.pieces), landed.scene.tick,
                                landed.scene.title, landed.scene.words, landed.changes,
                                landed.summary))
            session.sync_index(memory)
            session.flush()
    finally:
        session.flush()
    result.characters = len(memory.characters)
    return result


def _land_or_stop(session: Session, m: Manuscript, index: int, first: int, memory: Memory,
                  extract_on: bool, result: ImportResult) -> _Landed:
    """Land one piece; a model failure becomes ImportStoppedError saying how to resume."""
    try:
        return land(session, m, index, first, memory, extract_on)
    except ModelError as exc:
        raise ImportStoppedError(
            f"import stopped at piece {index + 1} of {len(m.pieces)}: {exc}; {index} of "
            f"{len(m.pieces)} pieces are imported ({len(result.ticks)} in this run); run the "
            "same `novel import` again to resume", done=index, total=len(m.pieces)) from exc


def _count(result: ImportResult, landed: _Landed) -> None:
    result.ticks.append(landed.scene.tick)
    result.words += landed.scene.words
    if landed.summary is not None:
        result.checkpoints += [d.name for d in landed.summary.made
                               if d.name not in result.checkpoints]
        result.warnings += landed.summary.warnings
        if landed.summary.failure is not None:
            result.warnings.append(str(landed.summary.failure))
