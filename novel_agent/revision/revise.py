"""`novel revise N [--file F]`: scene N's new text, and the memory that follows it.

1. Pending edits get their entry (scene N edited by hand among them).
2. The extractor reads the new text, with memory as it was when tick N was
   written (the history's entry after tick N−1, else memory re-derived from the
   records) and tick N's tools and cast run again, told that the author revised
   the scene (not the old scene's intention).
3. Memory is re-derived twice from there, tick N's record and every later one
   replayed as the ticks applied them (revision/rederive.py: the tools, the
   extraction checked against each scene's prose, what the audit records, the
   clock): once with scene N as it was (`base`), once with the new text
   (`theirs`). What the new text changes (theirs against base) is laid over the
   memory files (revision/merge.py), so an edit by hand made after tick N
   stands, and a revise that changes nothing leaves memory byte for byte.
4. Scene N (prose, summary bullets, words), its plan record (the extraction and
   the changes it applied) and memory land in ONE transaction, with a marker
   (`.novel/revise.yaml`).
5. Every summary whose range holds N is remade (checkpoints, then the arcs and
   the overall summary above them); the revision is an entry; the marker goes.
   A kill before that: the next command puts the project back as it was before
   the revise (`settle`, the same way redo's marker does): before, or after.

A scene as its tick wrote it (the history holds the prose its extraction was read
from, and the text is that) is not revised: no model called, no file written, no
entry (`Revision.unchanged` says so). A new text whose extraction and re-derived
memory are as they were writes the scene's file alone and remakes no summary.

The result counts what scene N's extraction applied to memory before and after
(the changes no longer made, the new ones), names the memory files the revise
changed, the later scenes that rely on what scene N no longer says (a phrase of
a change no longer made that a later scene's prose, or the memory its tick
recorded, uses), and the later scenes where one the new text makes dead acts or
speaks; they are reported, not rewritten.
"""

from __future__ import annotations

import json
import re
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from novel_agent.audit.clock import CLOCK_FILE
from novel_agent.audit.rules import NOT_IN_PERSON, quote_for
from novel_agent.context.presence import gone
from novel_agent.errors import ModelResponseError, ProjectError
from novel_agent.files import dump_yaml, parse_front_matter, read_bytes, read_yaml
from novel_agent.history.git import HistoryError
from novel_agent.history.interrupted import REVISE_MARKER as MARKER
from novel_agent.history.rewind import keep_tag
from novel_agent.history.store import History
from novel_agent.models.ask import StageCall, told
from novel_agent.models.base import StoryView
from novel_agent.revision.merge import merge_memory, merged_text
from novel_agent.revision.rederive import (
    Derived,
    before_extraction,
    clock_of,
    derive_range,
    read_record,
    replay,
)
from novel_agent.revision.repair import orphans
from novel_agent.story.decisions import Extraction, plan_from_record
from novel_agent.story.memory.files import stage_memory
from novel_agent.story.memory.read import load_memory
from novel_agent.story.memory.records import Character
from novel_agent.story.memory.store import Memory, find_person
from novel_agent.story.outline.file import Outline, load_outline
from novel_agent.story.outline.payoffs import closing_chapter
from novel_agent.story.outline.standing import beat_of
from novel_agent.story.project.folder import Project
from novel_agent.story.scenes import Scene, load_scene, word_count
from novel_agent.story.summaries import load_tree
from novel_agent.text.names import normalize_name
from novel_agent.tick.session import Session
from novel_agent.tick.stage_prompts import build_extractor
from novel_agent.tick.stages import extract, summarize
from novel_agent.tick.stages.extract import as_told

STOP = set("""a an the and or but of to in on at by for with from into onto over under as is
was were be been has have had it its this that these those he she they them his her their
who whom what which when where why how not no now then there here than so very all any some
one two each more most much many just only also still yet""".split())


@dataclass
class Reliance:
    """A later scene that uses what scene N no longer says (in its prose, or in what its
    tick recorded in memory)."""

    tick: int
    phrase: str
    lost: str
    in_prose: bool = True

    def line(self, revised: int) -> str:
        where = f"scene {self.tick} mentions" if self.in_prose else \
            f"what tick {self.tick} recorded in memory mentions"
        return f"{where} “{self.phrase}”, which scene {revised} no longer says ({self.lost})"


@dataclass
class Acting:
    """A later scene where one the revised scene now makes dead acts or speaks."""

    tick: int
    name: str
    since: int
    quote: str

    def line(self) -> str:
        return (f"scene {self.tick}: {self.name} acts or speaks, dead since scene "
                f"{self.since}: “{self.quote}”")


@dataclass
class Revision:
    """What a revise did."""

    tick: int
    extraction: Extraction | None
    lost: list[str] = field(default_factory=list)       # changes scene N no longer makes
    gained: list[str] = field(default_factory=list)     # changes it makes now and did not
    changed: list[str] = field(default_factory=list)    # memory files written or removed
    relying: list[Reliance] = field(default_factory=list)
    acting: list[Acting] = field(default_factory=list)   # the newly dead, acting later
    summaries: list[str] = field(default_factory=list)  # remade
    skipped: list[str] = field(default_factory=list)    # edited by hand: kept
    notices: list[str] = field(default_factory=list)
    memory_at: Memory | None = None      # memory right after the revised tick
    clock_at: str = ""                   # and memory/clock.yaml's text then
    last: int = 0                        # the project's last tick
    unchanged: str = ""                  # why nothing was written, when nothing was


# -- the steps -----------------------------------------------------------------------
def memory_before(project: Project, history: History | None, tick: int, config) -> Derived:
    """Memory and the clock as they were when tick `tick` was written: the history's
    entry after tick−1, else re-derived from the records of ticks 1..tick−1."""
    if history is not None:
        try:
            entry = history.entry_at(tick - 1)
        except HistoryError:
            entry = None
        if entry is not None:
            return derived_of(history, entry.sha)
    return derive_range(project, Derived(Memory()), 1, tick - 1, config)


def derived_of(history: History, sha: str) -> Derived:
    """The memory and clock an entry holds (read from its tree, nothing on disk touched)."""
    out = history.git.run("ls-tree", "-r", "-z", sha, "--", "memory").decode("utf-8")
    rows = [row.split("\t", 1) for row in out.split("\x00") if row]
    blobs = history.git.blobs([meta.split()[2] for meta, _ in rows])
    with tempfile.TemporaryDirectory() as folder:
        for (_, path), data in zip(rows, blobs):
            target = Path(folder) / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        memory = load_memory(Path(folder) / "memory")
        clock, scene = clock_of(read_yaml(Path(folder) / "memory" / CLOCK_FILE, {}))
    return Derived(memory, clock, scene)


def recorded_body(project: Project, history: History, tick: int) -> str | None:
    """The prose scene `tick`'s recorded extraction was read from: the scene as the
    history's entry that last wrote its plan record holds it (None when there is no such
    entry), so scene N as it was replays as its tick applied it."""
    plan = project.plan_path(tick).relative_to(project.root).as_posix()
    sha = history.git.run("log", "-1", "--format=%H", "HEAD", "--", plan,
                          check=False).decode().strip()
    path = project.scene_path(tick).relative_to(project.root).as_posix()
    text = history.git.run("show", f"{sha}:{path}", check=False) if sha else b""
    if not text:
        return None
    _, body = parse_front_matter(text.decode("utf-8", "replace"), path=project.scene_path(tick))
    return body


def as_written(body: str, recorded: str | None, on_disk: str) -> bool:
    """Whether the revise's text (`body`) and the scene on disk are the prose its tick's
    extraction was read from (`recorded`, None when the history does not hold it)."""
    return recorded is not None and body.strip() == recorded.strip() == on_disk.strip()


UNCHANGED = ("scene {tick} is as its tick wrote it: nothing to revise (no file written, no "
             "entry made, no model called)")
SAME = ("scene {tick}'s extraction and the memory that follows from it are as they were: "
        "{what}, no summary remade")


def new_text(path: Path) -> str:
    """The prose of a file given with --file (front matter, if any, left out)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ProjectError(f"{path}: cannot read the new text ({exc})", path=str(path)) from None
    _, body = parse_front_matter(text, path=path)
    if not body.strip():
        raise ProjectError(f"{path}: the new text is empty", path=str(path))
    return body.strip() + "\n"


# What the extractor is told the scene was meant to do: the old plan's intention was the
# old scene's, and the revised one may do otherwise.
REVISED = ("The author revised this scene: record what it establishes as it now stands, "
           "whatever was planned for it.")


def re_extract(session: Session, memory: Memory, record: dict, body: str,
               revision: Revision, outline: Outline | None = None,
               beat: str = "") -> Extraction | None:
    """Ask the extractor about the new text (as tick N's extractor was asked, with the
    revision said in place of the old intention; of a scene written under the book's
    `outline`, of the beat its plan advanced, `beat`, and of its tension); `record` gets
    `extraction_fallback` when the answer cannot be used."""
    project, tick = session.project, int(record["tick"])
    planned = plan_from_record(record)
    plan = replace(planned, intention=REVISED)
    session.at_tick(tick)
    # the offline model draws its answer from the tick's plan (its view), as the tick's
    # own extraction was drawn: a revise that changes nothing, changes nothing
    gen = session.config.generation
    view = StoryView(story=project.story(), memory=memory, tick=tick, plan=planned, prose=body,
                     min_words=gen.scene_min_words, max_words=gen.scene_max_words)
    planned_beat = beat_of(outline, beat) if outline is not None else None
    built = build_extractor(session, story=project.story(), memory=memory,
                            plan=as_told(plan), prose=body, tick=tick, beat=planned_beat,
                            tension=outline is not None)
    budget = session.budget("extractor")
    try:
        count = session.counter_of("extractor").count_messages
        extraction, _ = extract.run(told(session.model, view=view), built.messages,
                                    max_tokens=budget.max_output,
                                    room=lambda messages: budget.left_after(count(messages)),
                                    knowledge=session.knowledge,
                                    beat=planned_beat is not None, tension=outline is not None)
    except ModelResponseError as exc:
        if not isinstance(exc.call, StageCall):
            raise
        revision.notices.append(f"the extractor's answer could not be used ({exc}); the "
                                "scene's own sentences stand as its summary")
        record["extraction_fallback"] = str(exc)
        return None
    record.pop("extraction_fallback", None)
    return extraction


def reshaped(scene: Scene, new: Extraction | None) -> dict[str, Any]:
    """The revised scene's beat status and tension, as the extractor read the new text
    (a scene written under an outline; a status or a tension it did not give is no
    longer known: the old one was read from the old text)."""
    status = new.beat_status if new is not None and scene.beat else ""
    tension = new.tension if new is not None else None
    return {"beat_status": status, "tension": tension,
            "tension_reason": new.tension_reason if new is not None and tension is not None
            else ""}


def phrases(text: str, names: set[str]) -> list[str]:
    """The two-word phrases of content words in `text` (not two names): what a later
    scene would say if it relied on it ("brass key", "old mill")."""
    words = re.findall(r"[A-Za-z][A-Za-z'’-]*", text.split(": ", 1)[-1])
    found = []
    for a, b in zip(words, words[1:]):
        if a.lower() in STOP or b.lower() in STOP or len(a) < 3 or len(b) < 3:
            continue
        if a.lower() in names and b.lower() in names:
            continue
        found.append(f"{a} {b}".lower())
    return list(dict.fromkeys(found))


def relying(project: Project, tick: int, last: int, lost: list[str], kept: str,
            names: set[str]) -> list[Reliance]:
    """Later scenes whose prose, or the memory their tick recorded, uses a phrase only what
    was lost had (the prose first: a scene that says it is named for its prose)."""
    found = []
    for later in range(tick + 1, last + 1):
        record = read_yaml(project.plan_path(later), {}) or {}
        prose = load_scene(project.scene_path(later)).body.lower()
        recorded = json.dumps(record.get("extraction") or {}, ensure_ascii=False).lower()
        seen = set()
        for item in lost:
            hit = next((p for p in phrases(item, names) if p not in kept and
                        (p in prose or p in recorded)), None)
            if hit and hit not in seen:          # one line per phrase a scene uses
                seen.add(hit)
                found.append(Reliance(later, hit, item, in_prose=hit in prose))
    return found


def newly_dead(before: Memory, after: Memory) -> list[Character]:
    """The characters `after` has as dead and `before` (the same tick, with scene N as it
    was) does not."""
    return [c for key, c in after.characters.items() if c.get("status") == "dead"
            and gone(before.characters.get(key)) != "dead"]


def acting(project: Project, tick: int, last: int, memory: Memory,
           dead: list[Character]) -> list[Acting]:
    """The later scenes where one of `dead` is there in person (in the scene's cast, or
    among those its recorded extraction says were present and not only recalled) and a
    sentence of its prose names them outside a dream, a memory or a grave (the audit's
    rule for the dead: audit/rules.py)."""
    if not dead:
        return []
    ids = {str(c.get("id")): c for c in dead}
    found = []
    for later in range(tick + 1, last + 1):
        scene = load_scene(project.scene_path(later))
        said = (read_yaml(project.plan_path(later), {}) or {}).get("extraction") or {}
        recalled = {normalize_name(str(n)) for n in said.get("recalled") or []}
        there = [scene.pov, *scene.characters, *(said.get("present") or [])]
        seen: set[str] = set()
        for name in there:
            who = find_person(memory, str(name)) if name else None
            key = str(who.get("id")) if who is not None else ""
            if key not in ids or key in seen or normalize_name(str(name)) in recalled:
                continue
            seen.add(key)
            quote = quote_for(scene.body, str(ids[key]["name"]), avoid=NOT_IN_PERSON)
            if quote:
                found.append(Acting(later, str(ids[key]["name"]),
                                    int(ids[key].get("status_in") or tick), quote))
    return found


def remake_summaries(session: Session, tick: int, memory: Memory, revision: Revision) -> None:
    """Remake the checkpoints and arcs whose range holds `tick`, then the overall summary."""
    s = summarize.Summarizer(session, memory)
    tree = s.tree()
    over = sorted((d for d in tree.docs.values() if d.first <= tick <= d.last),
                  key=lambda d: (d.kind != "checkpoint", d.level, d.first))
    for doc in over:
        if doc.edited:
            revision.skipped.append(doc.name)
            continue
        if doc.kind == "checkpoint":
            s.checkpoint(doc.last, doc.first)
        else:
            fresh = s.tree()
            s.arc(fresh, fresh.children(fresh.docs[doc.name]), name=doc.name)
        revision.summaries.append(doc.name)
    if tree.overall is not None and over:
        if tree.overall.edited:
            revision.skipped.append(tree.overall.name)
        elif s.overall(s.tree(), rebuild=True) is not None:
            revision.summaries.append(tree.overall.name)


def rederived(session: Session, history: History | None, tick: int, last: int,
              old: dict, new: dict, old_body: str, new_body: str) -> tuple[Derived, Derived,
                                                                             list[str], list[str]]:
    """Memory re-derived from before tick `tick` to `last` with scene `tick` as it was
    (`old`, its record; `old_body`) and as it is now: (base, theirs, the changes the old
    record applied, the changes the new one applies). `session`'s revision gets the
    memory right after the revised tick."""
    project, config, story = session.project, session.config, session.project.story()
    base = memory_before(project, history, tick, config)
    theirs = base.copy()
    old_lines = replay(base, old, story=story, config=config, body=old_body)
    new_lines = replay(theirs, new, story=story, config=config, body=new_body)
    return base, theirs, old_lines, new_lines


def replay_later(session: Session, first: int, last: int, *derived: Derived) -> None:
    """Ticks first..last replayed on each of `derived` (each record and scene read once)."""
    project, config, story = session.project, session.config, session.project.story()
    for later in range(first, last + 1):
        record, body = read_record(project, later), load_scene(project.scene_path(later)).body
        for each in derived:
            replay(each, record, story=story, config=config, body=body)


def unchanged(history: History, tick: int, last: int) -> Revision:
    """The revise of a scene as its tick wrote it: nothing to do; memory right after it
    read from the history (for --rewrite-after, when it holds the tick's entry)."""
    try:
        after: Derived | None = derived_of(history, history.entry_at(tick).sha)
    except HistoryError:
        after = None
    return Revision(tick, None, last=last, unchanged=UNCHANGED.format(tick=tick),
                    memory_at=after.memory if after else None,
                    clock_at=after.clock_text() if after else "")


# -- the whole -----------------------------------------------------------------------
def revise(session: Session, tick: int, text: str | None = None) -> Revision:
    """Revise scene `tick` (its text as on disk, or `text`) and what follows from it (see
    the module docstring). The caller holds the project's lock."""
    project, config = session.project, session.config
    found = History(project, now=session.now)
    history = found if found.available else None
    old_body = None
    if history is not None and history.git.exists() and project.scene_path(tick).is_file():
        old_body = recorded_body(project, history, tick)   # before a hand edit's entry
    last = project.tick()
    if not 1 <= tick <= last:
        raise ProjectError(f"no scene {tick} to revise: the scenes are 1–{last}",
                           path=str(project.scenes_dir))
    if any(orphans(project)):
        raise ProjectError(f"plans or summaries reach past the last scene (tick {last}), "
                           "deleted by hand?: run `novel doctor --fix` first",
                           path=str(project.plans_dir))
    scene = load_scene(project.scene_path(tick))
    body = text if text is not None else scene.body
    if history is not None and as_written(body, old_body, scene.body):
        return unchanged(history, tick, last)
    if history is not None:
        history.record_pending()
    record = read_record(project, tick)
    story = project.story()
    revision = Revision(tick, None, last=last)
    asked = memory_before(project, history, tick, config).memory
    before_extraction(asked, record, story=story)
    new_record = dict(record)
    outline = load_outline(project.outline_file) if scene.chapter is not None else None
    new = re_extract(session, asked, new_record, body, revision, outline, scene.beat)
    if new is not None and new.loops_opened and outline is not None and \
            scene.chapter is not None and closing_chapter(outline, scene.chapter):
        revision.notices.append("the final act opens no loop: the extractor's loops_opened "
                                "of the new text not recorded")
        new = replace(new, loops_opened=[])
    revision.extraction = new
    new_record["extraction"] = (new or extract.from_prose(body)).to_dict()
    base, theirs, old_lines, new_lines = rederived(
        session, history, tick, last, record, new_record,
        old_body if old_body is not None else scene.body, body)
    new_record["memory_changes"] = new_lines
    revision.memory_at, revision.clock_at = theirs.memory.copy(), theirs.clock_text()
    died = newly_dead(base.memory, theirs.memory)
    replay_later(session, tick + 1, last, base, theirs)
    revision.lost = [line for line in old_lines if line not in new_lines]
    revision.gained = [line for line in new_lines if line not in old_lines]
    ours = load_memory(project.memory_dir)
    memory = merge_memory(base.memory, ours, theirs.memory)
    clock_path = project.memory_dir / CLOCK_FILE
    ours_clock = read_bytes(clock_path).decode("utf-8") if clock_path.is_file() else ""
    clock = merged_text(base.clock_text(), ours_clock, theirs.clock_text())
    names = {w.lower() for c in memory.characters.values() for w in str(c.get("name")).split()}
    revision.relying = relying(project, tick, last, revision.lost,
                               " ".join(revision.gained).lower(), names)
    revision.acting = acting(project, tick, last, memory, died)
    summary = list((new or extract.from_prose(body)).summary)
    revised = replace(scene, body=body, summary=summary, words=word_count(body),
                      tokens=session.counter.count(body),
                      **(reshaped(scene, new) if outline is not None else {}))
    txn = project.transaction(f"the revise of scene {tick}")
    if revised.render() != project.scene_path(tick).read_text(encoding="utf-8"):
        txn.stage(project.scene_path(tick), revised.render())
    if new_record != record:
        txn.stage(project.plan_path(tick), dump_yaml(new_record))
    stage_memory(txn, memory, project.memory_dir, ours)
    if clock != ours_clock and clock:
        txn.stage(clock_path, clock)
    elif clock != ours_clock:
        txn.remove(clock_path)
    revision.changed = sorted(p.relative_to(project.root).as_posix() for p in txn.ops
                              if p.is_relative_to(project.memory_dir))
    same = not revision.changed and new_record == record    # the extraction, memory, clock
    if same:
        written = [p.relative_to(project.root).as_posix() for p in txn.ops]
        revision.unchanged = SAME.format(tick=tick, what=f"{written[0]} written" if written
                                         else "no file written, no entry made")
        if not written:
            return revision
    if history is not None:
        txn.stage(project.novel_dir / MARKER, dump_yaml({"tick": tick,
                                                         "from": history.head().sha}))
    txn.commit()
    if not same:
        remake_summaries(session, tick, memory, revision)
    session.sync_index(memory)
    if history is not None:
        history.record("revise", last, f"revised scene {tick}: {len(revision.lost)} changes "
                       f"no longer made, {len(revision.gained)} new")
    (project.novel_dir / MARKER).unlink(missing_ok=True)
    return revision


def take_away_after(session: Session, revision: Revision) -> str:
    """For `--rewrite-after`: the ticks after the revised one go (kept under a tag), so
    they can be written again: scenes and plans after it, summaries reaching past it;
    memory as it is right after it; state.yaml as that tick left it. One transaction,
    one entry. The tag's name, or "" when there was nothing after it."""
    project, tick, last = session.project, revision.tick, revision.last
    history = History(project, now=session.now)
    if last <= tick or not history.available or revision.memory_at is None:
        return ""
    head = history.head()
    kept = keep_tag(history, history.git.branch(), head)
    history.git.run("update-ref", f"refs/tags/{kept}", head.sha)
    state = history.git.run("show", f"{history.entry_at(tick).sha}:.novel/state.yaml")
    txn = project.transaction(f"the taking away of ticks {tick + 1}–{last}")
    for later in range(tick + 1, last + 1):
        txn.remove(project.scene_path(later))
        txn.remove(project.plan_path(later))
    tree = load_tree(project.summaries_dir)
    for doc in [*tree.docs.values(), *([tree.overall] if tree.overall else [])]:
        if doc.last > tick and doc.path is not None:     # (a loaded doc has its path)
            txn.remove(doc.path)
    stage_memory(txn, revision.memory_at, project.memory_dir, load_memory(project.memory_dir))
    clock = project.memory_dir / CLOCK_FILE
    if revision.clock_at:
        txn.stage(clock, revision.clock_at)
    else:
        txn.remove(clock)
    txn.stage(project.state_file, state.decode("utf-8"))
    txn.commit()
    history.record("revise", tick, f"ticks {tick + 1}–{last} taken away to be written again "
                   f"(kept as {kept})")
    return kept
