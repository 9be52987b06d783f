"""`novel revise N [--file F]`: scene N's new text, and the memory that follows it.

1. Pending edits get their entry (scene N edited by hand among them).
2. The extractor reads the new text, with memory as it was when tick N was
   written: the history's entry after tick N−1 (else memory re-derived from the
   records), with tick N's tools and cast run again (rederive.before_extraction).
3. What scene N adds now replaces what it added; every later tick's recorded
   extraction is replayed on top (rederive.replay), so memory is what a run
   whose scene N was the new text all along would hold.
4. Scene N (prose, summary bullets, words), its plan record (the extraction)
   and memory land in ONE transaction, with a marker (`.novel/revise.yaml`).
5. Every summary whose range holds N is remade (checkpoints, then the arcs and
   the overall summary above them); the revision is an entry; the marker goes.
   A kill before that: the next command puts the project back as it was before
   the revise (`settle`, the same way redo's marker does): before, or after.

The result names the later scenes that rely on what scene N no longer says (a
fact, a character's state, a loop, a relationship whose words a later scene's
text or extraction uses); they are reported, not rewritten.
"""

from __future__ import annotations

import json
import re
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path

from novel_agent.errors import ModelResponseError, ProjectError
from novel_agent.files import dump_yaml, parse_front_matter, read_yaml
from novel_agent.history.git import HistoryError
from novel_agent.history.interrupted import REVISE_MARKER as MARKER
from novel_agent.history.rewind import keep_tag
from novel_agent.history.store import History
from novel_agent.models.ask import StageCall
from novel_agent.revision.rederive import (
    apply_extraction,
    before_extraction,
    extraction_of,
    plan_of,
    read_record,
    replay,
    replay_range,
)
from novel_agent.revision.repair import orphans
from novel_agent.story.decisions import Extraction
from novel_agent.story.memory import Memory, load_memory
from novel_agent.story.memory_files import stage_memory
from novel_agent.story.project import Project
from novel_agent.story.scenes import load_scene, word_count
from novel_agent.story.summaries import load_tree
from novel_agent.tick.pipeline import UNKNOWN, room_in
from novel_agent.tick.session import Session
from novel_agent.tick.stage_prompts import build_extractor
from novel_agent.tick.stages import extract, summarize

STOP = set("""a an the and or but of to in on at by for with from into onto over under as is
was were be been has have had it its this that these those he she they them his her their
who whom what which when where why how not no now then there here than so very all any some
one two each more most much many just only also still yet""".split())


@dataclass
class Reliance:
    """A later scene that uses what scene N no longer says."""

    tick: int
    phrase: str
    lost: str

    def line(self, revised: int) -> str:
        return (f"scene {self.tick} mentions “{self.phrase}”, which scene {revised} no longer "
                f"says ({self.lost})")


@dataclass
class Revision:
    """What a revise did."""

    tick: int
    extraction: Extraction | None
    lost: list[str] = field(default_factory=list)       # what scene N no longer adds
    gained: list[str] = field(default_factory=list)     # what it adds now and did not
    relying: list[Reliance] = field(default_factory=list)
    summaries: list[str] = field(default_factory=list)  # remade
    skipped: list[str] = field(default_factory=list)    # edited by hand: kept
    notices: list[str] = field(default_factory=list)
    memory_at: Memory | None = None      # memory right after the revised tick
    last: int = 0                        # the project's last tick


# -- the steps -----------------------------------------------------------------------
def memory_before(project: Project, history: History | None, tick: int, config) -> Memory:
    """Memory as it was when tick `tick` was written: the history's entry after tick−1,
    else re-derived from the records of ticks 1..tick−1."""
    if history is not None:
        try:
            entry = history.entry_at(tick - 1)
        except HistoryError:
            entry = None
        if entry is not None:
            return memory_of(history, entry.sha)
    return replay_range(project, Memory(), 1, tick - 1, config)


def memory_of(history: History, sha: str) -> Memory:
    """The memory an entry holds (read from its tree, nothing on disk touched)."""
    out = history.git.run("ls-tree", "-r", "-z", sha, "--", "memory").decode("utf-8")
    rows = [row.split("\t", 1) for row in out.split("\x00") if row]
    blobs = history.git.blobs([meta.split()[2] for meta, _ in rows])
    with tempfile.TemporaryDirectory() as folder:
        for (_, path), data in zip(rows, blobs):
            target = Path(folder) / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        return load_memory(Path(folder) / "memory")


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


def re_extract(session: Session, memory: Memory, record: dict, body: str,
               revision: Revision) -> Extraction | None:
    """Ask the extractor about the new text (as tick N's extractor was asked)."""
    project, tick = session.project, int(record["tick"])
    plan = plan_of(record)
    session.at_tick(tick)
    session.source.story, session.source.memory = project.story(), memory
    session.source.steer, session.source.plan, session.source.prose = "", plan, body
    built = build_extractor(session, story=project.story(), memory=memory,
                            plan=replace(plan, pov=plan.pov or UNKNOWN,
                                         location=plan.location or UNKNOWN),
                            prose=body, tick=tick)
    budget = session.budget("extractor")
    try:
        extraction, _ = extract.run(session.model, built.messages, max_tokens=budget.max_output,
                                    room=room_in(session, budget), knowledge=session.knowledge)
    except ModelResponseError as exc:
        if not isinstance(exc.call, StageCall):
            raise
        revision.notices.append(f"the extractor's answer could not be used ({exc}); the "
                                "scene's own sentences stand as its summary")
        record["extraction_fallback"] = str(exc)
        return None
    record.pop("extraction_fallback", None)
    return extraction


def items(extraction: Extraction | None) -> list[str]:
    """What an extraction adds, one line each (to tell what a revision lost)."""
    if extraction is None:
        return []
    return ([f"fact: {f}" for f in extraction.facts]
            + [f"{c.get('name')}: {c.get('state', '')}" for c in extraction.characters]
            + [f"loop opened: {t}" for t in extraction.loops_opened]
            + [f"loop resolved: {t}" for t in extraction.loops_resolved]
            + [f"{r.get('a')} & {r.get('b')}: {r.get('kind')}" for r in extraction.relationships])


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
    """Later scenes whose text or recorded extraction uses a phrase only what was lost had."""
    found = []
    for later in range(tick + 1, last + 1):
        record = read_yaml(project.plan_path(later), {}) or {}
        text = (load_scene(project.scene_path(later)).body + " "
                + json.dumps(record.get("extraction") or {}, ensure_ascii=False)).lower()
        seen = set()
        for item in lost:
            hit = next((p for p in phrases(item, names) if p not in kept and p in text), None)
            if hit and hit not in seen:          # one line per phrase a scene uses
                seen.add(hit)
                found.append(Reliance(later, hit, item))
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


# -- the whole -----------------------------------------------------------------------
def revise(session: Session, tick: int, text: str | None = None) -> Revision:
    """Revise scene `tick` (its text as on disk, or `text`) and what follows from it (see
    the module docstring). The caller holds the project's lock."""
    project, config = session.project, session.config
    history = History(project, now=session.now)
    history = history if history.available else None
    if history is not None:
        history.record_pending()
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
    record = read_record(project, tick)
    old = extraction_of(record)
    story = project.story()
    memory = memory_before(project, history, tick, config)
    before_extraction(memory, record, story=story)
    revision = Revision(tick, None, last=last)
    new = re_extract(session, memory.copy(), record, body, revision)
    revision.extraction = new
    record["memory_changes"] = apply_extraction(memory, record, new, story=story,
                                                config=config, body=body)
    record["extraction"] = (new or extract.from_prose(body)).to_dict()
    revision.memory_at = memory.copy()
    for later in range(tick + 1, last + 1):
        later_record = read_record(project, later)
        replay(memory, later_record, story=story, config=config,
               body=load_scene(project.scene_path(later)).body)
    lost_items = [i for i in items(old) if i not in items(new)]
    revision.lost, revision.gained = lost_items, [i for i in items(new) if i not in items(old)]
    names = {w.lower() for c in memory.characters.values() for w in str(c.get("name")).split()}
    kept = " ".join(items(new)).lower()
    revision.relying = relying(project, tick, last, lost_items, kept, names)
    summary = list((new or extract.from_prose(body)).summary)
    revised = replace(scene, body=body, summary=summary, words=word_count(body),
                      tokens=session.counter.count(body))
    txn = project.transaction()
    txn.stage(project.scene_path(tick), revised.render())
    txn.stage(project.plan_path(tick), dump_yaml(record))
    stage_memory(txn, memory, project.memory_dir, load_memory(project.memory_dir))
    if history is not None:
        txn.stage(project.novel_dir / MARKER, dump_yaml({"tick": tick,
                                                         "from": history.head().sha}))
    txn.commit()
    remake_summaries(session, tick, memory, revision)
    session.sync_index(memory)
    if history is not None:
        history.record("revise", last, f"revised scene {tick}: {len(revision.lost)} things "
                       f"no longer said, {len(revision.gained)} new")
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
    txn = project.transaction()
    for later in range(tick + 1, last + 1):
        txn.remove(project.scene_path(later))
        txn.remove(project.plan_path(later))
    tree = load_tree(project.summaries_dir)
    for doc in [*tree.docs.values(), *([tree.overall] if tree.overall else [])]:
        if doc.last > tick:
            txn.remove(doc.path)
    stage_memory(txn, revision.memory_at, project.memory_dir, load_memory(project.memory_dir))
    txn.stage(project.state_file, state.decode("utf-8"))
    txn.commit()
    history.record("revise", tick, f"ticks {tick + 1}–{last} taken away to be written again "
                   f"(kept as {kept})")
    return kept
