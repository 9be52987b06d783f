"""The manuscript in: `novel import` brings an existing text into a project. Prints nothing.

    manuscript = load_manuscript(path, split, max_words)   # read and split; writes nothing
    result = import_manuscript(session, manuscript, extract=True, on_progress=...)

Each piece becomes the next tick, T = (the last tick or scene on disk) + 1, and
goes through the tick's own sequence, `pipeline.land_given`: begin (the index
synced, memory read), the extractor step (an unusable answer: the piece lands
summed up by its own sentences, `extraction_fallback` in its plan record), one
commit of scene, plan record, memory, state and prompt log (older logs
stripped past `context.keep_prompt_logs`), then the checkpoints and arcs owed.
Without extraction the scenes land with their titles as summaries, and no
model is called.

An import has no planner, so its Plan is made from the piece: the title, the
intention "Imported scene N: <first sentence>", as POV the known character who
tells it (books/pov.py: who the piece names and shows perceiving most, never one
found dead in it or dead before it, a tie to the last scene's POV; else the
project's protagonist if the piece names them, else none), as location the known
place it names most (else none), and as characters the known ones it names. The
extractor sees "unknown" where there is none. Characters the extractor names are created when the name is
plausible (`names.name_problem`, `names.person_problem`) and the piece writes the
whole name as a name (`names.written_name`), so a guess such as "Someone", "The
Launderer's Map", "Thursday" or the "Keel" of "Keel Street" never becomes a
person; their state is then set by `story/memory/extraction.apply_extraction` (which creates no one
these checks refuse), and the plan is guessed again with them known.

Resume: `.novel/state.yaml` holds `import:` (source, sha256 of its text,
split mode, max_words, pieces, done, first tick), committed with each piece.
A run with the same source, text and split continues after the pieces done
(split again with the recorded max_words); a finished one does nothing; any
other import is appended after the scenes already there.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeGuard

from novel_agent.books.pov import guess_pov, named
from novel_agent.books.split import ImportedScene, Manuscript, split_manuscript
from novel_agent.errors import ImportStoppedError, ModelError, TickError
from novel_agent.story.decisions import Extraction, Plan
from novel_agent.story.memory.read import load_memory
from novel_agent.story.memory.store import Memory, find_person, upsert_character
from novel_agent.story.project.folder import Project, Story
from novel_agent.story.scenes import load_scene, scene_ticks
from novel_agent.text.names import name_problem, person_problem, written_name
from novel_agent.tick.draft import GivenScene, TickDraft, TickResult
from novel_agent.tick.pipeline import land_given
from novel_agent.tick.session import Session
from novel_agent.tick.stages import summarize


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


def same_import(record: Any, m: Manuscript) -> TypeGuard[dict[str, Any]]:
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
def mentions(entities: Iterable[Mapping[str, Any]], text: str) -> list[str]:
    """Names of the entities (places) `text` mentions by name or alias, each mention
    counted once (its longest form), most mentioned first, then in the text's order."""
    counts: Counter[str] = Counter()
    forms: dict[str, str] = {}
    for entity in entities:
        name = " ".join(str(entity.get("name") or "").split())
        for form in (name, *(" ".join(str(a).split()) for a in entity.get("aliases") or [])):
            if name and form:
                forms.setdefault(form.lower(), name)
    if not forms:
        return []
    pattern = r"\b(" + "|".join(re.escape(f) for f in sorted(forms, key=len, reverse=True)) + r")\b"
    for m in re.finditer(pattern, text, re.IGNORECASE):
        counts[forms[m.group(1).lower()]] += 1
    return [name for name, _ in counts.most_common()]


def first_sentence(body: str) -> str:
    """The piece's first sentence (at most 160 characters), for its intention."""
    flat = " ".join(body.split())
    match = re.search(r"^.+?[.!?…](?=\s|$)", flat)
    return (match.group(0) if match else flat)[:160]


def guess_plan(piece: ImportedScene, number: int, memory: Memory, story: Story, *,
               last_pov: str = "", dead: Iterable[str] = ()) -> Plan:
    """The plan an imported piece stands for (see the module docstring): `last_pov` is the
    scene before's POV, `dead` who this piece's extraction says died."""
    people = list(memory.characters.values())
    protagonist = story.protagonist.split(",")[0].strip()
    gone = {str(c.get("name")) for c in people if c.get("status") == "dead"}
    gone |= {str(who["name"]) for who in (find_person(memory, n) for n in dead) if who is not None}
    pov, cast = guess_pov(people, piece.body, dead=gone, last_pov=last_pov,
                          protagonist=protagonist)
    if not cast and protagonist and named([{"name": protagonist}], piece.body):
        pov, cast = protagonist, [protagonist]
    places = mentions(memory.locations.values(), piece.body)
    return Plan(intention=f"Imported scene {number}: {first_sentence(piece.body)}",
                pov=pov, location=places[0] if places else "",
                title=piece.title, characters=cast[:8])


def last_pov(project: Project, tick: int) -> str:
    """The POV of the scene before `tick` ("" when there is none)."""
    path = project.scene_path(tick - 1)
    return load_scene(path).pov if tick > 1 and path.is_file() else ""


def create_cast(memory: Memory, extraction: Extraction, body: str, tick: int,
                check: Callable[[str], str | None]) -> list[str]:
    """Create the characters the extractor names that memory does not know yet, when
    the piece writes the whole name as a name (`written_name`, its spelling kept) and
    neither `check` nor `person_problem` finds a problem with it ("She", "Thursday" and
    "Miss" are no one). Returns what changed, one line each."""
    created = []
    for item in extraction.characters:
        if memory.find_character(item["name"]):
            continue
        name = written_name(item["name"], body)
        if name is None or check(name) or person_problem(name) or memory.find_character(name):
            continue
        _, new = upsert_character(memory, name, tick=tick, state=item.get("state", ""),
                                  beside=body)
        if new:
            created.append(f"new character: {name}")
    return created


# -- one piece ---------------------------------------------------------------------
def _record(m: Manuscript, done: int, first_tick: int) -> dict[str, Any]:
    return {"source": m.source, "sha256": m.sha256, "split": m.split, "max_words": m.max_words,
            "pieces": len(m.pieces), "done": done, "first_tick": first_tick}


def given_piece(session: Session, m: Manuscript, index: int, first_tick: int,
                extract_on: bool) -> GivenScene:
    """Piece `index` as the scene the tick's sequence lands next (see the module
    docstring): its plan guessed from memory, and guessed again once the extraction
    has introduced who it names; the resume record goes into the same commit."""
    piece, number = m.pieces[index], index + 1
    entities = session.config.generation.enable_entity_updates
    tick = next_tick(session.project)
    before = last_pov(session.project, tick)

    def plan(memory: Memory, story: Story) -> Plan:
        return guess_plan(piece, number, memory, story, last_pov=before)

    def introduce(draft: TickDraft) -> tuple[list[str], Plan]:
        story = draft.story
        check = lambda name: name_problem(name, title=story.title or story.name,  # noqa: E731
                                          premise=story.premise)
        changes = create_cast(draft.memory, draft.extracted, piece.body, draft.tick, check) \
            if entities else []
        died = [s.get("name", "") for s in draft.extracted.status if s.get("status") == "dead"]
        return changes, guess_plan(piece, number, draft.memory, story, last_pov=before,
                                   dead=died)

    imported = {"source": m.source, "piece": number, "of": len(m.pieces),
                "chapter": piece.chapter}
    return GivenScene(tick=tick, prose=piece.body, plan=plan,
                      introduce=introduce, extract=extract_on,
                      record={"imported": imported, **({} if extract_on else
                                                        {"extraction": None})},
                      state={"import": _record(m, number, first_tick)})


# -- the whole import --------------------------------------------------------------
def import_manuscript(session: Session, manuscript: Manuscript, *, extract: bool = True,
                      on_progress: OnProgress | None = None) -> ImportResult:
    """Import the pieces not yet imported, in order, one tick each (the caller holds
    the project's lock). A model failure raises ImportStoppedError; what landed stays."""
    project = session.project
    m, done = resume(project, manuscript)
    record = project.state().get("import")
    first = int(record.get("first_tick") or 0) if done and isinstance(record, dict) \
        else next_tick(project)        # (done: `record` is this import's, see resume)
    result = ImportResult(total=len(m.pieces), skipped=done)
    emit = on_progress or (lambda progress: None)
    emit(ImportProgress(done, len(m.pieces)))
    for index in range(done, len(m.pieces)):
        landed = _land_or_stop(session, m, index, first, extract, result)
        _count(result, landed)
        emit(ImportProgress(index + 1, len(m.pieces), landed.tick, landed.title,
                            landed.words, landed.memory_changes, landed.summary))
    result.characters = len(load_memory(project.memory_dir).characters)
    return result


def _land_or_stop(session: Session, m: Manuscript, index: int, first: int, extract_on: bool,
                  result: ImportResult) -> TickResult:
    """Land one piece; a model failure becomes ImportStoppedError saying how to resume."""
    try:
        return land_given(session, given_piece(session, m, index, first, extract_on))
    except TickError as exc:
        cause = exc.__cause__ if isinstance(exc.__cause__, ModelError) else exc
        raise ImportStoppedError(
            f"import stopped at piece {index + 1} of {len(m.pieces)}: {cause}; {index} of "
            f"{len(m.pieces)} pieces are imported ({len(result.ticks)} in this run); run the "
            "same novel import again to resume", done=index, total=len(m.pieces)) from exc


def _count(result: ImportResult, landed: TickResult) -> None:
    result.ticks.append(landed.tick)
    result.words += landed.words
    if landed.fallback:
        result.warnings.append(f"scene {landed.tick}: the extractor's answer could not be used "
                               f"({landed.fallback}); the scene's own sentences stand as its "
                               "summary")
    if landed.summary is not None:
        result.checkpoints += [d.name for d in landed.summary.made
                               if d.name not in result.checkpoints]
        result.warnings += landed.summary.warnings
        if landed.summary.failure is not None:
            result.warnings.append(str(landed.summary.failure))
