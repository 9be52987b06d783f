"""The revision of the rest of the outline at a checkpoint, after a tick has landed.

When the tick's scene closed a chapter at a checkpoint (story/outline/drift.py: every
`outline.revise_every` chapters) and the story has drifted from the outline (beats
missed or done out of order, new threads), ONE call to the planner's model (stage
"outline", answered under a JSON schema, repaired once, recorded in the usage
ledger) rewrites the chapters from the one the book goes on to: their titles,
purposes and beats, keeping every part marked `locked: true`, every chapter the book
has written in, every beat a scene has landed (done or partly), each chapter's
target length and their number (story/outline/revision.py): the book never grows,
so a book that drifts still ends within the outline's stretch. The prompt tells
what happened: the scenes of the chapters closed, the beats landed, missed or done
out of order, the new threads.

The scene is committed before this runs and nothing here can undo it: the revision
is best-effort. A failed or unusable answer leaves the outline as it was and says so
in a notice; a revision writes the outline once, atomically, and is an entry of the
history ("outline revised at chapter 5: 2 beats missed, 3 new threads"), shown by
`novel log`. A tick that closes no chapter, or one on course, costs nothing here
but the look at where the book stands (which the tick makes anyway).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from novel_agent.context.outline_briefing import outline_briefing
from novel_agent.errors import ModelResponseError, NovelError
from novel_agent.history import hooks as history
from novel_agent.models.ask import StageCall, ask_json, told
from novel_agent.models.base import StoryView
from novel_agent.story.outline.answers import STAGE
from novel_agent.story.outline.drift import Drift, checkpoint, measure
from novel_agent.story.outline.file import Outline, load_outline, save_outline
from novel_agent.story.outline.revision import (
    Slots,
    account,
    chapters_text,
    copied_beats,
    revised,
    revision_from_json,
    schema,
    to_write,
)
from novel_agent.story.outline.standing import BookStanding
from novel_agent.story.project.folder import Project
from novel_agent.story.scenes import Scene, SceneReader, scene_ticks
from novel_agent.story.summaries import load_tree
from novel_agent.tick.events import OnStage, StageEvent
from novel_agent.tick.stage_prompts import fit_briefing
from novel_agent.tick.stages.outline import landed, numbers_text, regen_slots

if TYPE_CHECKING:
    from novel_agent.story.memory.store import Memory
    from novel_agent.tick.session import Session


def at_checkpoint(session: Session, tick: int, memory: Memory, before: BookStanding,
                  after: BookStanding, emit: OnStage) -> list[str]:
    """Revise the rest of the outline if scene `tick` closed a chapter at a checkpoint and
    the story has drifted (`before`, `after`: where the book stood for the scene and
    stands now; `memory` as the tick left it); a notice saying what was done, or why not
    ([] when nothing was due)."""
    config, project = session.config.outline, session.project
    was, now = before.position.chapter, after.position.chapter
    if config.revise == "off" or was is None or now is None or now.number == was.number:
        return []                     # no chapter closed: nothing read, nothing asked
    scenes = _scenes(project, tick)
    outline = load_outline(project.outline_file)
    chapter = checkpoint(outline, scenes, config.revise_every) if outline else None
    if outline is None or chapter is None:
        return []
    drift = measure(outline, scenes, memory.loops, chapter, config.revise_every)
    if not drift.drifted:
        return []
    # the book's last beat, its ending, stays: a revision changes the road, not where it ends
    # (the 1.5B, asked to revise the last chapter, wrote "She faces challenges and obstacles
    # along the way" over the arc's ending)
    ending = [b.id for b in outline.beats()[-1:]]
    slots = regen_slots(outline, chapter, config.sizes(session.lean_for(STAGE)).beats,
                        keep=[*landed(scenes), *ending])
    at = f"at chapter {chapter}: {drift.line()}"
    if not slots:
        return [f"the outline was not revised {at}: the rest of it is locked or landed"]
    started, call, refused = session.clock(), None, list[str]()
    try:
        new, call, refused = revise(session, outline, slots, drift, scenes)
        if new == outline:
            return [f"the outline was not revised {at}: the model wrote the rest as it was"]
        save_outline(project.outline_file, new)
    except (NovelError, OSError) as exc:
        if isinstance(exc, ModelResponseError) and isinstance(exc.call, StageCall):
            call = exc.call
        return [f"the outline was not revised {at} ({exc}): it stands as it was; the scene "
                "is committed (the revision is best-effort)"]
    finally:
        if call is not None:
            emit(StageEvent("outline", session.clock() - started, call.prompt_tokens,
                            call.completion_tokens, call.cached_tokens, len(call.completions)))
    subject = f"outline revised {at}"
    said = [subject, *([f"{len(refused)} revised beat{'s' if len(refused) != 1 else ''} "
                        f"refused as a copy of a scene's summary ({refused[0][:60]!r}): the "
                        "beat before kept"] if refused else [])]
    try:
        history.after_outline(project, subject, now=session.now, seen=session.seen)
    except (NovelError, OSError) as exc:
        return [*said, f"the revision has no entry in the history ({exc}): the next one "
                       "records it"]
    return said


def revise(session: Session, outline: Outline, slots: Slots, drift: Drift,
           scenes: list[Scene]) -> tuple[Outline, StageCall, list[str]]:
    """The one call: `outline` with the chapters of `slots` rewritten after `drift`, and
    the beats of the answer refused as copies of a scene's summary line (`revised`)."""
    project, numbers = session.project, sorted(slots)
    story = project.story()
    job = {"level": "revise", "rewrite": True, "count": len(numbers), "numbers": numbers,
           "numbers_text": numbers_text(numbers), "total": len(outline.chapters()),
           "beats": [to_write(slots)[n] for n in numbers], "threads": list(drift.threads),
           "chapters_text": chapters_text(outline, slots)}
    tree = load_tree(project.summaries_dir)
    briefing = outline_briefing(story, outline, job, near=numbers[0],
                                so_far=tree.overall.body if tree.overall is not None else "",
                                drift=account(drift, scenes))
    built = fit_briefing(session, briefing, project.tick(), compare=False)
    budget = session.budget(STAGE)
    model = told(session.model, view=StoryView(story=story, tick=session.tick, job=job))
    answers, call = ask_json(model, STAGE, built.messages, budget.max_output,
                             schema(slots), lambda data: revision_from_json(data, slots, story.protagonist),
                             lambda m: budget.left_after(session.counter_of(STAGE).count_messages(m)))
    summaries = [line for scene in scenes for line in scene.summary]
    return revised(outline, slots, answers, summaries), call, copied_beats(answers, summaries)


def _scenes(project: Project, upto: int) -> list[Scene]:
    """The book's scenes up to tick `upto`, in order (one that cannot be read left out)."""
    reader, scenes = SceneReader(project.scenes_dir), []
    for tick in scene_ticks(project.scenes_dir):
        try:
            scene = reader(tick) if tick <= upto else None
        except (NovelError, OSError):
            continue
        if scene is not None:
            scenes.append(scene)
    return scenes
