"""The stages, declared once: what every part of the program knows of a stage by its name.

    planner -> writer -> (mend) -> extractor -> (auditor) -> commit -> summarizer (-> outline)

A `StageSpec` is a stage's line in the registry: its name (the key of `llm.stages`, of
the usage ledger's rows, of the prompt logs), what pages and the live view call it,
its prompt's template, its llama.cpp slot on an embedded model, where its answer's
cap comes from, and whose model it asks when it has none of its own. How a stage
builds its request, asks and applies the answer is its module's (`module`: the tick's
stages, tick/registry.py), which this floor of the program does not import.

The settings (`llm.stages.<stage>`, each stage's cap), events, the live view, `novel
context --stage`, the reports, the ledger, the local model's slots and the offline
model all read `STAGES`; adding a stage is one module and one `declare` line.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

TICK = "tick"            # a stage of every tick: one prompt, one prompt log a tick
OCCASIONAL = "occasional"  # a stage a tick asks now and then (a checkpoint, a finding)
COMMAND = "command"      # a stage only a command asks (the outline, the book's names)


@dataclass(frozen=True)
class StageSpec:
    """One stage, as the rest of the program sees it."""

    name: str                 # "planner": llm.stages' key, the ledger's and the logs' stage
    label: str                # "Planner": what pages and reports call it
    verb: str                 # "plan": the live view's and `novel tick`'s word for it
    module: str = ""          # the module that builds, asks and applies it ("" = the tick's own)
    template: str = ""        # its prompt's template in context/templates ("" = none)
    slot: int = 0             # its llama.cpp slot on an embedded model (its prefix stays cached)
    # Where its answer's cap comes from: the setting at this dotted path, else `max_tokens`
    # (`llm.stages.<name>.max_tokens` before either).
    cap_key: str = ""
    max_tokens: int = 600
    borrows: str = ""         # the stage whose model it asks ("" = a model of its own: llm.stages)
    kind: str = TICK          # TICK, OCCASIONAL or COMMAND (see above)

    @property
    def own_model(self) -> bool:
        """Whether `llm.stages.<name>` may give it a model of its own."""
        return not self.borrows


_DECLARED: dict[str, StageSpec] = {}


def declare(spec: StageSpec) -> StageSpec:
    """Add a stage to the registry (a plugin's or a test's; the built-in ones are below).
    Declaring a name again replaces its line."""
    _DECLARED[spec.name] = spec
    return spec


def forget(name: str) -> None:
    """Take a declared stage out again (a test's, when it is done)."""
    _DECLARED.pop(name, None)


def stages() -> Iterator[StageSpec]:
    """Every declared stage, in the order a tick meets them."""
    return iter(list(_DECLARED.values()))


def spec(name: str) -> StageSpec | None:
    """The stage named `name`, None when none is."""
    return _DECLARED.get(name)


def names(*, own_model: bool = False, kind: str = "") -> tuple[str, ...]:
    """The names of the declared stages, in order: those that may have a model of their
    own, or those of one kind, when asked."""
    return tuple(s.name for s in stages() if (not own_model or s.own_model)
                 and (not kind or s.kind == kind))


def ticked() -> tuple[str, ...]:
    """The stages every tick runs, in order: those `novel context --stage` can show."""
    return names(kind=TICK)


def model_of(name: str) -> str:
    """The stage whose model `name` asks (itself, unless it borrows one)."""
    found = _DECLARED.get(name)
    return found.borrows if found is not None and found.borrows else name


def verb(name: str) -> str:
    """The live view's word for a stage ("plan"); a name nothing declares is its own word."""
    found = _DECLARED.get(name)
    return found.verb if found is not None else name


def label(name: str) -> str:
    """What pages call a stage ("Planner")."""
    found = _DECLARED.get(name)
    return found.label if found is not None else name.capitalize()


def slot(name: str) -> int:
    """The llama.cpp slot of a stage on an embedded model (0 for a name nothing declares)."""
    found = _DECLARED.get(name)
    return found.slot if found is not None else 0


def slots() -> int:
    """How many llama.cpp slots the declared stages keep."""
    return max((s.slot for s in stages()), default=0) + 1


# -- the built-in stages, in the order a tick meets them ------------------------------

for _spec in (
    StageSpec("planner", "Planner", "plan", "novel_agent.tick.stages.plan", "plan.j2", 0,
              cap_key="llm.planner_max_tokens"),
    StageSpec("writer", "Writer", "write", "novel_agent.tick.stages.write", "write.j2", 1,
              cap_key="llm.writer_max_tokens"),
    StageSpec("mend", "Sentence mend", "mend", "novel_agent.tick.prose_step", "", 1,
              borrows="writer", kind=OCCASIONAL),
    StageSpec("extractor", "Extractor", "extract", "novel_agent.tick.stages.extract",
              "extract.j2", 2, cap_key="llm.extractor_max_tokens"),
    StageSpec("auditor", "Auditor", "audit", "novel_agent.tick.stages.audit", "audit.j2", 0,
              cap_key="audit.max_tokens", kind=OCCASIONAL),
    StageSpec("summarizer", "Summarizer", "summarize", "novel_agent.tick.stages.summarize",
              "summarize.j2", 3, cap_key="llm.summarizer_max_tokens", kind=OCCASIONAL),
    StageSpec("outline", "Outline", "outline", "novel_agent.tick.stages.outline", "outline.j2",
              0, cap_key="llm.planner_max_tokens", kind=COMMAND),
    StageSpec("names", "Book's names", "names", "novel_agent.tick.stages.names", "", 0,
              borrows="planner", kind=COMMAND),
):
    declare(_spec)
