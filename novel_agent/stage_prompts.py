"""Building each stage's prompt for a project: read what the engine needs, fit, report.

This is the edge between the project's files and the pure context engine
(`context/`): it loads only the scenes the tiers can use (so a build costs
the same at scene 10 and scene 10,000), the previous prompt of the same stage
(for the prefix-share figure), and renders through the project's templates.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

from .decisions import Plan
from .config import Config
from .context import Context
from .context.budget import Budget, stage_budget
from .windows import limits_for
from .context.builders import extractor_context, planner_context
from .context.engine import fit
from .context.sectioned import propose_sectioned
from .context.report import build_report
from .context.writer import Piece, WriterInputs, propose_writer
from .memory import Memory
from .project import Project
from .prompts import render_stage
from .scenes import SceneReader
from .prompt_log import previous_messages
from .tokens import TokenCounter


@dataclass
class Built:
    """A prompt ready to send, and its report."""

    stage: str
    messages: list[dict[str, str]]
    report: dict[str, Any]
    state: dict[str, Any]


def _fit(project: Project, config: Config, counter: TokenCounter, stage: str, tick: int,
         propose: Callable, budget: Budget) -> Built:
    render = lambda ctx: render_stage(ctx, project.templates_dir)  # noqa: E731
    fitted = fit(propose, render, counter, budget.tokens, config.context.compaction_thresholds)
    report = build_report(fitted, budget, counter, tick=tick,
                          previous=previous_messages(project, tick, stage))
    return Built(stage, fitted.messages, report, fitted.state)


def build_planner(project: Project, config: Config, counter: TokenCounter, *, story: Any,
                  memory: Memory, tick: int, scenes: SceneReader, overall: str = "",
                  steer: str = "") -> Built:
    """The planner's prompt for `tick`."""
    budget = stage_budget(config, "planner", limits_for(config))
    ctx = planner_context(story, memory, scenes.recent(tick - 1, config.generation.recent_scenes_count), tick=tick,
                          overall_summary=overall, steer=steer,
                          max_tools=config.generation.max_tools_per_tick)
    return _fit(project, config, counter, "planner", tick, propose_sectioned(ctx, counter), budget)


def build_writer(project: Project, config: Config, counter: TokenCounter, *, story: Any,
                 memory: Memory, plan: Plan, tick: int, scenes: SceneReader,
                 tool_results: Sequence[str] = (), steer: str = "",
                 tier3: Sequence[Piece] | Callable[[int], Sequence[Piece]] = (),
                 lore: Sequence[Piece] = (),
                 retrieved: Sequence[Piece] = ()) -> Built:
    """The writer's prompt for `tick`, its tiers continuing from the committed state."""
    budget = stage_budget(config, "writer", limits_for(config))
    gen = config.generation
    inputs = WriterInputs(story=story, memory=memory, plan=plan, last_tick=tick - 1,
                          scene=scenes, tick=tick, tool_results=tool_results, steer=steer,
                          tier3=tier3, lore=lore, retrieved=retrieved,
                          state=project.state().get("writer_tiers") or {},
                          min_words=gen.scene_min_words, max_words=gen.scene_max_words)
    propose = propose_writer(inputs, counter, budget.tokens, config.context, gen)
    return _fit(project, config, counter, "writer", tick, propose, budget)


def build_extractor(project: Project, config: Config, counter: TokenCounter, *, story: Any,
                    memory: Memory, plan: Plan, prose: str, tick: int) -> Built:
    """The extractor's prompt: a very long scene is cut middle-out, never refused."""
    budget = stage_budget(config, "extractor", limits_for(config))
    ctx = extractor_context(story, memory, plan, prose, tick=tick)
    return _fit(project, config, counter, "extractor", tick, propose_sectioned(ctx, counter),
                budget)


def fit_context(project: Project, config: Config, counter: TokenCounter, context: Context,
                tick: int) -> Built:
    """Fit any stage's prebuilt context (the summarizer uses this)."""
    budget = stage_budget(config, context.stage, limits_for(config))
    return _fit(project, config, counter, context.stage, tick,
                propose_sectioned(context, counter), budget)


def open_counter(project: Project, config: Config) -> TokenCounter:
    """A token counter for the project's model whose counts persist in .novel/index.db."""
    from .index import Index
    from .models import model_id
    return TokenCounter(model_id(config), config.context.encoding,
                        store=Index(project.index_db))


def preview(project: Project, config: Config, stage: str, counter: TokenCounter) -> Built:
    """Build the next tick's prompt for `stage` without calling any LLM.

    The writer and extractor need a plan (and prose) that only the model can
    give; the offline model's deterministic answers stand in for them, so the
    sizes and the layout are those of a real tick.
    """
    from .decisions import plan_from_json
    from .lenient_json import parse_json
    from .memory import load_memory
    from .models.base import Request
    from .models.offline import OfflineModel
    from .stages.tools import ensure_cast, run_tools

    gen = config.generation
    story, memory, tick = project.story(), load_memory(project.memory_dir), project.tick() + 1
    scenes, steer = SceneReader(project.scenes_dir), project.steer()
    from .summaries import tier3_selector
    select, overall = tier3_selector(project, config, counter.count)
    planner = build_planner(project, config, counter, story=story, memory=memory, tick=tick,
                            scenes=scenes, overall=overall, steer=steer)
    if stage == "planner":
        return planner
    stand_in = OfflineModel(seed=config.llm.seed)
    hints = {"story": story, "memory": memory, "tick": tick,
             "min_words": gen.scene_min_words, "max_words": gen.scene_max_words}
    answer = stand_in.complete(Request("planner", planner.messages, 1, {"type": "object"},
                                       hints=hints))
    plan = plan_from_json(parse_json(answer.text), max_tools=gen.max_tools_per_tick)
    tool_results = run_tools(memory, plan.tool_calls, tick, gen.max_tools_per_tick)
    tool_results += ensure_cast(memory, plan, tick)
    tier3 = lambda budget: [Piece(d.name, d.block()) for d in select(budget)]  # noqa: E731
    writer = build_writer(project, config, counter, story=story, memory=memory, plan=plan,
                          tick=tick, scenes=scenes, tool_results=tool_results, steer=steer,
                          tier3=tier3)
    if stage == "writer":
        return writer
    prose = stand_in.complete(Request("writer", writer.messages, 1,
                                      hints={**hints, "plan": plan})).text
    return build_extractor(project, config, counter, story=story, memory=memory, plan=plan,
                           prose=prose, tick=tick)

