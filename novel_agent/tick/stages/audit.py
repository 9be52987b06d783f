"""Stage 3½, audit: between extract and commit, the scene's findings and the policy.

The tick's `step` checks the new scene's extraction against memory by rules
(audit/rules.py) and, with `audit.llm`, asks the auditor stage for findings with
quotes from the draft (those it cannot quote are discarded and counted; a malformed
answer, twice, is a note and never a lost tick). Then `audit.mode` decides: report,
revise (the scene asked again through the writer's own `scene`, its answer extracted
and, when audit/policy.verdict keeps it, applied by the extractor's own `apply`, from
the draft before the first extraction) or hold (nothing committed, the draft kept).
`knowledge` then writes what the scene establishes (status, places, objects, looks,
witnesses, the clock) into memory. `apply_held` makes a begun draft the tick the audit
held, for `novel audit accept`; `audit_project` is `novel audit`'s.
"""

from __future__ import annotations

from dataclasses import replace

from novel_agent.audit.book import BookAudit, audit_book
from novel_agent.audit.clock import Clock, clock_file, read_clock
from novel_agent.audit.findings import Finding
from novel_agent.audit.held import HELD_FILE, HeldDraft, held_text
from novel_agent.audit.llm import AUDIT_SCHEMA, findings_from_json, verify
from novel_agent.audit.policy import acted_on, revise_request, verdict
from novel_agent.audit.result import AuditResult
from novel_agent.audit.rules import Rules, SceneInput, check
from novel_agent.config.budget import Budget
from novel_agent.config.settings import Config
from novel_agent.context.auditor import auditor_briefing
from novel_agent.errors import AuditHoldError, ContextOverflowError, ModelError
from novel_agent.files import atomic_write
from novel_agent.models.ask import StageCall, ask_json
from novel_agent.models.base import ChatModel
from novel_agent.story.decisions import Extraction, Plan
from novel_agent.story.memory.read import load_memory
from novel_agent.story.memory.records import Fact
from novel_agent.story.memory.store import Memory, find_person
from novel_agent.story.project.folder import Project
from novel_agent.story.scenes import SceneReader
from novel_agent.tick.draft import TickContext, TickDraft
from novel_agent.tick.events import StageEvent
from novel_agent.tick.scene_memory import extraction_step, knowledge_step, name_check, plan_step
from novel_agent.tick.session import Session
from novel_agent.tick.stage_prompts import Built, fit_briefing
from novel_agent.tick.stages import extract, mend, write
from novel_agent.tick.stages.commit import draft_path, plan_record

LEANER_TRIES = 3      # fits of the writer's prompt to leave room for the audit's revision
HELD_CHOICES = ("`novel audit accept` lands it as it is; `novel audit drop` discards it "
                "(fix the story or its memory, and the next tick writes it again); "
                "`novel tick --drop-held` discards it and writes the tick again")
ACCEPTED = "held by the continuity audit, then accepted as it was (novel audit accept)"


def rules_of(config: Config) -> Rules:
    """The rule checks' thresholds from `audit.*`."""
    return Rules(loop_overdue=config.audit.loop_overdue or config.generation.loop_overdue_after,
                 repeat_threshold=config.audit.repeat_threshold)


def recent_bodies(scenes: SceneReader, tick: int, window: int) -> list[tuple[int, str, str]]:
    """(tick, title, body) of the last `window` scenes before `tick`."""
    return [(s.tick, s.title, s.body) for s in scenes.recent(tick - 1, window)] if window else []


def scene_input(config: Config, d: TickDraft, prose: str, extraction: Extraction,
                clock: tuple[Clock | None, int]) -> SceneInput:
    """The rule checks' input for draft `d` with `prose` and `extraction`."""
    plan = d.planned
    return SceneInput(tick=d.tick, prose=prose, extraction=extraction, memory=d.memory,
                      title=plan.title, pov=plan.pov, location=plan.location,
                      clock=clock[0], clock_scene=clock[1],
                      recent=recent_bodies(d.scenes, d.tick, config.audit.repeat_window),
                      rules=rules_of(config), known_people=known(d, "characters"),
                      known_places=known(d, "locations"), cast=list(plan.characters))


def known(d: TickDraft, kind: str) -> set[str]:
    """The ids of the characters (or places) known before draft `d`'s tick, and those its
    planner introduced on purpose (a create_* tool call)."""
    tool = "create_character" if kind == "characters" else "create_location"
    ids = set(getattr(d.start.before, kind))
    find = d.memory.find_character if kind == "characters" else d.memory.find_location
    for call in d.planned.tool_calls:
        entity = find(call.name) if call.tool == tool else None
        if entity is not None:
            ids.add(str(entity.get("id")))
    return ids


def findings(ctx: TickContext, d: TickDraft, prose: str, extraction: Extraction,
             clock: tuple[Clock | None, int], result: AuditResult) -> tuple[list[Finding], TickDraft]:
    """The findings of `prose` and `extraction` as the draft's scene: the rules', then
    (audit.llm) the auditor's; and the draft with the auditor's prompt."""
    found = check(scene_input(ctx.config, d, prose, extraction, clock))
    if not ctx.config.audit.llm:
        return found, d
    plan = d.planned
    said, built = ask_auditor(ctx.session, ctx.model(d), tick=d.tick, plan=plan,
                              memory=d.memory, scenes=d.scenes, prose=prose, result=result,
                              people=[plan.pov, *plan.characters, *extraction.present,
                                      *extraction.recalled])
    return found + said, d.with_built(built) if built is not None else d


def ask_auditor(session: Session, model: ChatModel, *, tick: int, plan: Plan, memory: Memory,
                scenes: SceneReader, prose: str, result: AuditResult,
                people: list[str]) -> tuple[list[Finding], Built | None]:
    """The auditor stage's verified findings of scene `tick` (`prose`, `plan`; `people`:
    who the draft has in person or in memory), and its prompt; a failure is a note in
    `result`, never an error."""
    names = [n for n in (plan.pov, *plan.characters, plan.location) if n]
    facts = related_facts(memory, names, tick)
    shown = [(s.tick, " ".join(s.summary) or s.title) for s in scenes.recent(tick - 1, 30)
             if {s.pov, *s.characters, s.location} & set(names)][::-1][:10]
    cards = [find_person(memory, n) for n in dict.fromkeys(people)]
    built = fit_briefing(session, auditor_briefing(prose, facts, shown, tick=tick,
                                                   people=[c for c in cards if c]),
                         tick, compare=False)
    budget = session.budget("auditor")
    count = session.counter_of("auditor").count_messages
    try:
        raw, call = ask_json(model, "auditor", built.messages, budget.max_output, AUDIT_SCHEMA,
                             findings_from_json, lambda m: budget.left_after(count(m)))
    except ModelError as exc:
        made = getattr(exc, "call", None)       # a ModelResponseError's: what was asked
        if isinstance(made, StageCall):
            result.calls.append(made)
        result.notes.append(f"the auditor's answer could not be used ({exc}); the rule "
                            "checks' findings stand")
        return [], built
    result.calls.append(call)
    verified = verify(raw, prose, tick=tick, facts=facts, scenes=shown)
    result.discarded += verified.discarded
    if verified.discarded:
        result.notes.append(f"{verified.discarded} of the auditor's findings had no quote from "
                            "the draft and were discarded")
    return verified.findings, built


def related_facts(memory: Memory, names: list[str], tick: int,
                  limit: int = 40) -> list[Fact]:
    """The facts before `tick` that name any of `names` (a name or its first word), newest
    first."""
    keys = {w.lower() for n in names for w in (n, n.split()[0]) if len(w) > 2}
    return [f for f in reversed(memory.facts)
            if isinstance(f.get("scene"), int) and f["scene"] < tick
            and any(k in str(f.get("text", "")).lower() for k in keys)][:limit]


# -- the steps ---------------------------------------------------------------------


def step(ctx: TickContext, d: TickDraft) -> TickDraft:
    """The continuity audit between extract and commit: findings, the policy of
    `audit.mode` (a revision kept replaces the prose and the extraction; a hold stops the
    tick, nothing committed, the draft kept), the auditor's event when it was asked."""
    started = ctx.session.clock()
    result, d = _policy(ctx, d)
    d = replace(d, audit=result).told(*result.notes)
    if result.calls:       # the rule checks alone take no time worth a line
        ctx.emit(StageEvent("auditor", ctx.session.clock() - started,
                            sum(c.prompt_tokens for c in result.calls),
                            sum(c.completion_tokens for c in result.calls),
                            sum(c.cached_tokens for c in result.calls),
                            sum(len(c.completions) for c in result.calls)))
    if result.held:
        hold(ctx, d, result)
    return d


def _policy(ctx: TickContext, d: TickDraft) -> tuple[AuditResult, TickDraft]:
    """The findings and what `audit.mode` does with them (a given scene, an import, is
    reported on, never revised or held); the draft, revised when the revision is kept."""
    config = ctx.config.audit
    mode = config.mode if d.given is None or config.mode == "off" else "report"
    result = AuditResult(mode)
    if mode == "off":
        return result, d
    clock = read_clock(ctx.project.memory_dir)
    result.findings, d = findings(ctx, d, d.prose, d.extracted, clock, result)
    acted = acted_on(result.findings, config.act_on)
    if mode == "revise" and acted:
        try:
            prose, extraction, calls = revision(ctx, d, revise_request(acted))
        except (ModelError, ContextOverflowError) as exc:   # not answered, or not askable
            result.notes.append(f"the revision failed ({exc}); the first draft stands")
            return result, d
        result.calls += calls
        again, d = findings(ctx, d, prose, extraction, clock, result)
        keep, note = verdict(result.findings, again)
        result.notes.append(note)
        if keep:
            result.revised, result.prose, result.extraction = True, prose, extraction
            result.findings = again
            d = revised(ctx, d, result, calls[-1])
    result.held = mode == "hold" and bool(acted)
    return result, d


def revision(ctx: TickContext, d: TickDraft, ask: str) -> tuple[str, Extraction, list[StageCall]]:
    """audit.mode revise: the scene asked of the writer once more (write.scene), shown its
    draft with the findings listed (its prompt leaner when they would take the answer's
    room: `revision_messages`), and the new draft's answer of the extractor (not applied:
    the audit decides whether it is kept)."""
    budget = ctx.budget("writer")
    messages = revision_messages(ctx, d, ask, budget)
    limit = write.revision_limit(ctx.session.counter_of("writer").count_messages(messages),
                                 budget, ctx.config.generation.scene_min_words)
    prose, wrote = write.scene(ctx, d, messages, max_tokens=limit)
    again = replace(d, prose=prose)
    extraction, extracted = extract.answer(ctx, again, extract.prompt_for(ctx, again, prose), prose)
    return prose, extraction, [wrote, extracted]


def revision_messages(ctx: TickContext, d: TickDraft, ask: str,
                      budget: Budget) -> list[dict[str, str]]:
    """The revise request: the writer's prompt, its draft and the findings. When the
    draft and the findings take the room the answer needs, the writer's prompt is fitted
    anew to leave it (or, if its pinned parts alone take that room, to them alone)."""
    count, prompt = ctx.session.counter_of("writer").count_messages, d.built["writer"].messages
    messages = write.revision(prompt, d.prose, ask)
    if budget.left_after(count(messages)) >= budget.max_output:
        return messages
    added = count(messages) - count(prompt)
    for _ in range(LEANER_TRIES):
        try:
            return write.revision(write.prompt_for(ctx, d, budget.leaving(added)).messages,
                                  d.prose, ask)
        except ContextOverflowError as exc:    # the pinned parts need more: them alone
            added = budget.tokens - exc.need   # (which can move with the budget: again)
    return messages       # write.revision_limit says whether it can be sent as it is


def revised(ctx: TickContext, d: TickDraft, result: AuditResult, call: StageCall) -> TickDraft:
    """The draft with the kept revision: from memory as it was before the first
    extraction (`d.undo`), the new prose checked and its extraction applied by the
    extractor's own `apply`."""
    assert d.undo is not None and result.extraction is not None
    base = replace(d, memory=d.undo.memory, changes=d.undo.changes, undo=None, audit=result,
                   prose=result.prose, checked=mend.checking(ctx, d, result.prose))
    return extract.apply(ctx, base, extract.Extracted(result.extraction), call)


def hold(ctx: TickContext, d: TickDraft, result: AuditResult) -> None:
    """audit.mode hold: keep the draft and what the held tick was, and stop the tick."""
    path = draft_path(ctx.project, d.tick)
    atomic_write(path, d.prose + "\n")
    atomic_write(ctx.project.novel_dir / HELD_FILE,
                 held_text(d.tick, d.planned.title, result.findings, str(path),
                           record=plan_record(d), prose=d.prose))
    lines = [f.line() for f in result.findings]
    raise AuditHoldError(f"tick {d.tick} is held by the continuity audit (audit.mode: "
                         f"hold): {len(lines)} finding(s); nothing is committed, the draft "
                         f"is kept in {path}; {HELD_CHOICES}:"
                         + "".join(f"\n  {line}" for line in lines),
                         tick=d.tick, findings=lines, draft_path=str(path))


def knowledge(ctx: TickContext, d: TickDraft) -> TickDraft:
    """The draft with what the scene establishes written into memory (status, places,
    objects, looks, witnesses) and the story's clock moved on, where it did
    (generation.enable_entity_updates)."""
    if not ctx.config.generation.enable_entity_updates:
        return d
    changes, after = knowledge_step(d.memory, d.extracted, d.planned, d.tick,
                                    read_clock(ctx.project.memory_dir), d.prose)
    return replace(d, changes=d.changes + tuple(changes),
                   clock_text=clock_file(*after) if after else "")


def apply_held(ctx: TickContext, d: TickDraft, held: HeldDraft) -> TickDraft:
    """Begun draft `d` as the tick `held` was when the audit held it, with no model: its
    plan, prose and extraction; the plan's tools run again and the cast made sure of,
    the extraction applied (to memory as it stands now), as the tick did before its
    audit; its findings are the audit's, accepted."""
    plan_step(d.memory, held.named, d.tick, len(held.plan.tool_calls), name_check(d.story))
    changes = extraction_step(d.memory, held.extraction, tick=d.tick, prose=held.prose,
                              generation=ctx.config.generation)
    return replace(d, plan=held.plan, prose=held.prose, extraction=held.extraction,
                   tool_results=tuple(held.tool_results), warnings=tuple(held.warnings),
                   cast_named=held.cast_named, changes=tuple(changes),
                   audit=AuditResult("hold", findings=held.findings, notes=[ACCEPTED]))


def audit_project(project: Project, config: Config, *, first: int = 1, last: int | None = None,
                  session: Session | None = None) -> BookAudit:
    """`novel audit`: the book's scenes `first`..`last` audited by the rules and, given a
    `session`, by the auditor stage too (each scene one call)."""
    auditor = None
    if session is not None:
        scenes = SceneReader(project.scenes_dir)

        def auditor(given: SceneInput) -> tuple[list[Finding], int]:
            plan = Plan(intention="", pov=given.pov, location=given.location, title=given.title,
                        characters=list(given.extraction.present))
            session.at_tick(given.tick)
            result = AuditResult("report")
            found, _ = ask_auditor(session, session.model, tick=given.tick, plan=plan,
                                   memory=given.memory, scenes=scenes, prose=given.prose,
                                   result=result, people=[plan.pov, *plan.characters])
            notes.extend(n for n in result.notes if "discarded" not in n)
            return found, result.discarded

    notes: list[str] = []
    book = audit_book(project.scenes_dir, project.plans_dir, load_memory(project.memory_dir),
                      rules=rules_of(config), window=config.audit.repeat_window, first=first,
                      last=last, auditor=auditor)
    book.notes += notes
    return book
