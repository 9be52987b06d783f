"""Stage 3½, audit: between extract and commit, the scene's findings and the policy.

`run` checks the new scene's extraction against memory by rules (audit/rules.py)
and, with `audit.llm`, asks the auditor stage for findings with quotes from the
draft (those it cannot quote are discarded and counted; a malformed answer,
twice, is a note and never a lost tick). Then `audit.mode` decides: report, revise
(one more draft through `rewrite`, kept by audit/policy.verdict) or hold. Finally
`record_knowledge` writes what the scene establishes (status, places, objects,
looks, witnesses, the clock) into memory. `apply_held` makes a begun draft the tick
the audit held, for `novel audit accept`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from novel_agent.audit.book import BookAudit, audit_book
from novel_agent.audit.findings import Finding
from novel_agent.audit.held import HeldDraft
from novel_agent.audit.knowledge import Clock, clock_file, read_clock
from novel_agent.audit.llm import AUDIT_SCHEMA, findings_from_json, verify
from novel_agent.audit.policy import acted_on, revise_request, verdict
from novel_agent.audit.rules import Rules, SceneInput, check
from novel_agent.config.settings import Config
from novel_agent.context.auditor import auditor_briefing
from novel_agent.errors import ContextOverflowError, ModelError
from novel_agent.models.ask import StageCall, ask_json
from novel_agent.story.decisions import Extraction, Plan
from novel_agent.story.memory import Memory, find_person, load_memory
from novel_agent.story.scenes import SceneReader
from novel_agent.tick.scene_memory import extraction_step, knowledge_step, name_check, plan_step
from novel_agent.tick.stage_prompts import fit_briefing

Rewrite = Callable[[str], tuple[str, Extraction, list[StageCall]]]


@dataclass
class AuditResult:
    """What the audit found and did for one tick."""

    mode: str
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    discarded: int = 0          # the auditor's findings without a quote from the draft
    revised: bool = False       # the revision was kept: prose and extraction below
    prose: str = ""
    extraction: Extraction | None = None
    held: bool = False
    calls: list[StageCall] = field(default_factory=list)

    def record(self) -> dict[str, Any]:
        """What the plan record keeps of it."""
        out: dict[str, Any] = {"mode": self.mode, "findings": [f.to_dict() for f in self.findings]}
        if self.notes:
            out["notes"] = self.notes
        if self.discarded:
            out["discarded"] = self.discarded
        return out


def rules_of(config: Config) -> Rules:
    """The rule checks' thresholds from `audit.*`."""
    return Rules(loop_overdue=config.audit.loop_overdue or config.generation.loop_overdue_after,
                 repeat_threshold=config.audit.repeat_threshold)


def recent_bodies(scenes: SceneReader, tick: int, window: int) -> list[tuple[int, str, str]]:
    """(tick, title, body) of the last `window` scenes before `tick`."""
    return [(s.tick, s.title, s.body) for s in scenes.recent(tick - 1, window)] if window else []


def scene_input(config: Config, d: Any, prose: str, extraction: Extraction,
                clock: tuple[Clock | None, int]) -> SceneInput:
    """The rule checks' input for draft `d` with `prose` and `extraction`."""
    return SceneInput(tick=d.tick, prose=prose, extraction=extraction, memory=d.memory,
                      title=d.plan.title, pov=d.plan.pov, location=d.plan.location,
                      clock=clock[0], clock_scene=clock[1],
                      recent=recent_bodies(d.scenes, d.tick, config.audit.repeat_window),
                      rules=rules_of(config), known_people=known(d, "characters"),
                      known_places=known(d, "locations"), cast=list(d.plan.characters))


def known(d: Any, kind: str) -> set[str]:
    """The ids of the characters (or places) known before draft `d`'s tick, and those its
    planner introduced on purpose (a create_* tool call)."""
    tool = "create_character" if kind == "characters" else "create_location"
    ids = set(getattr(d.before, kind))
    find = d.memory.find_character if kind == "characters" else d.memory.find_location
    for call in d.plan.tool_calls:
        entity = find(call.name) if call.tool == tool else None
        if entity is not None:
            ids.add(str(entity.get("id")))
    return ids


def audit_draft(session: Any, d: Any, prose: str, extraction: Extraction,
                clock: tuple[Clock | None, int], result: AuditResult) -> list[Finding]:
    """The findings of one draft: the rules', then (audit.llm) the auditor's."""
    findings = check(scene_input(session.config, d, prose, extraction, clock))
    if session.config.audit.llm:
        findings += ask_auditor(session, d, prose, result)
    return findings


def ask_auditor(session: Any, d: Any, prose: str, result: AuditResult) -> list[Finding]:
    """The auditor stage's verified findings; a failure is a note, never an error."""
    names = [n for n in (d.plan.pov, *d.plan.characters, d.plan.location) if n]
    facts = related_facts(d.memory, names, d.tick)
    scenes = [(s.tick, " ".join(s.summary) or s.title)
              for s in d.scenes.recent(d.tick - 1, 30)
              if {s.pov, *s.characters, s.location} & set(names)][::-1][:10]
    said = getattr(d, "extraction", None)      # who the draft has in person or in memory
    people = [find_person(d.memory, n) for n in dict.fromkeys(
        [d.plan.pov, *d.plan.characters, *(said.present + said.recalled if said else [])])]
    built = fit_briefing(session, auditor_briefing(prose, facts, scenes, tick=d.tick,
                                                   people=[c for c in people if c]),
                         d.tick, compare=False)
    d.built["auditor"] = built
    budget = session.budget("auditor")
    room = lambda messages: budget.left_after(session.counter_of("auditor").count_messages(messages))  # noqa: E731
    try:
        raw, call = ask_json(session.model, "auditor", built.messages, budget.max_output,
                             AUDIT_SCHEMA, findings_from_json, room)
    except ModelError as exc:
        made = getattr(exc, "call", None)       # a ModelResponseError's: what was asked
        if isinstance(made, StageCall):
            result.calls.append(made)
        result.notes.append(f"the auditor's answer could not be used ({exc}); the rule "
                            "checks' findings stand")
        return []
    result.calls.append(call)
    verified = verify(raw, prose, tick=d.tick, facts=facts, scenes=scenes)
    result.discarded += verified.discarded
    if verified.discarded:
        result.notes.append(f"{verified.discarded} of the auditor's findings had no quote from "
                            "the draft and were discarded")
    return verified.findings


def related_facts(memory: Memory, names: list[str], tick: int,
                  limit: int = 40) -> list[dict[str, Any]]:
    """The facts before `tick` that name any of `names` (a name or its first word), newest
    first."""
    keys = {w.lower() for n in names for w in (n, n.split()[0]) if len(w) > 2}
    return [f for f in reversed(memory.facts)
            if isinstance(f.get("scene"), int) and f["scene"] < tick
            and any(k in str(f.get("text", "")).lower() for k in keys)][:limit]


def run(session: Any, d: Any, rewrite: Rewrite | None = None) -> AuditResult:
    """Audit draft `d` (a TickDraft, its extraction applied) under `audit.mode`; a given
    scene (an import) is reported on, never revised or held."""
    config = session.config.audit
    mode = config.mode if d.given is None or config.mode == "off" else "report"
    result = AuditResult(mode)
    if mode == "off":
        return result
    clock = read_clock(session.project.memory_dir)
    result.findings = audit_draft(session, d, d.prose, d.extraction, clock, result)
    acted = acted_on(result.findings, config.act_on)
    if mode == "revise" and acted and rewrite is not None:
        try:
            prose, extraction, calls = rewrite(revise_request(acted))
        except (ModelError, ContextOverflowError) as exc:   # not answered, or not askable
            result.notes.append(f"the revision failed ({exc}); the first draft stands")
            return result
        result.calls += calls
        again = audit_draft(session, d, prose, extraction, clock, result)
        keep, note = verdict(result.findings, again)
        result.notes.append(note)
        if keep:
            result.revised, result.prose, result.extraction = True, prose, extraction
            result.findings = again
    result.held = mode == "hold" and bool(acted)
    return result


ACCEPTED = "held by the continuity audit, then accepted as it was (novel audit accept)"


def apply_held(session: Any, d: Any, held: HeldDraft) -> None:
    """Make begun draft `d` the tick `held` was when the audit held it, with no model:
    its plan, prose and extraction; the plan's tools run again and the cast made sure
    of, the extraction applied (to memory as it stands now), as the tick did before its
    audit; its findings are the audit's, accepted."""
    d.plan, d.prose, d.extraction = held.plan, held.prose, held.extraction
    d.tool_results, d.warnings = held.tool_results, held.warnings
    plan_step(d.memory, held.named, d.tick, len(d.plan.tool_calls), name_check(d.story))
    d.cast_named = held.cast_named
    d.changes = extraction_step(d.memory, d.extraction, tick=d.tick, prose=d.prose,
                                generation=session.config.generation)
    d.audit = AuditResult("hold", findings=held.findings, notes=[ACCEPTED])


def record_knowledge(memory: Memory, memory_dir: Any, d: Any) -> tuple[list[str], str]:
    """Write what scene `d` establishes into memory (in place); returns the changes and
    the new text of memory/clock.yaml ("" when the clock did not move on)."""
    changes, moved = knowledge_step(memory, d.extraction, d.plan, d.tick,
                                    read_clock(memory_dir)[0])
    return changes, clock_file(moved, d.tick) if moved else ""


def audit_project(project: Any, config: Config, *, first: int = 1, last: int | None = None,
                  session: Any = None) -> BookAudit:
    """`novel audit`: the book's scenes `first`..`last` audited by the rules and, given a
    `session`, by the auditor stage too (each scene one call)."""
    auditor = None
    if session is not None:
        scenes = SceneReader(project.scenes_dir)

        def auditor(given: SceneInput) -> tuple[list[Finding], int]:
            plan = Plan(intention="", pov=given.pov, location=given.location, title=given.title,
                        characters=list(given.extraction.present))
            d = SimpleNamespace(tick=given.tick, plan=plan, memory=given.memory, scenes=scenes,
                                built={})
            session.at_tick(given.tick)
            result = AuditResult("report")
            found = ask_auditor(session, d, given.prose, result)
            notes.extend(n for n in result.notes if "discarded" not in n)
            return found, result.discarded

    notes: list[str] = []
    book = audit_book(project.scenes_dir, project.plans_dir, load_memory(project.memory_dir),
                      rules=rules_of(config), window=config.audit.repeat_window, first=first,
                      last=last, auditor=auditor)
    book.notes += notes
    return book
