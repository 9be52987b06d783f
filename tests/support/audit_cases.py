"""The audit's scripted two-scene book: in scene 1 Tobin Keel drowns at the weir (PLAN1,
PROSE1, DIES); scene 2 (PLAN2) has him pour the tea (BAD, a contradiction) or only be
thought of (GOOD). `book(model)` scripts scene 1 and scene 2's plan; `extraction(present)`
is an extractor's answer with who was there; `configured(project, mode=...)` sets audit.*."""

from __future__ import annotations

from tests.support.scripted import ScriptedModel

PLAN1 = {"title": "The Weir", "intention": "Tobin drowns while Mara watches.", "pov": "Mara Quill",
         "location": "the weir", "characters": ["Mara Quill", "Tobin Keel"], "tool_calls": []}
PLAN2 = {"title": "Tea", "intention": "Mara takes tea at the quay.", "pov": "Mara Quill",
         "location": "the weir", "characters": ["Mara Quill", "Tobin Keel"], "tool_calls": []}
PROSE1 = "Tobin Keel drowned at the weir while Mara watched. " * 3
BAD = "The fog lifted at the weir. Tobin laughed and poured the tea for Mara. " * 3
GOOD = "The fog lifted at the weir. Mara poured the tea alone and thought of Tobin. " * 3


def extraction(present, **more):
    """An extractor's answer: three summary bullets, `present` there (and travelling), and
    any other keys given."""
    return {"summary": ["Mara is at the weir.", "The fog lifts slowly.", "The tea goes cold."],
            "facts": [], "characters": [], "loops_opened": [], "loops_resolved": [],
            "relationships": [], "present": present, "travel": present, **more}


DIES = extraction(["Mara Quill", "Tobin Keel"],
                  status=[{"name": "Tobin Keel", "status": "dead", "how": "drowned at the weir"}])


def book(model: ScriptedModel) -> ScriptedModel:
    """Scene 1: Tobin drowns. Scene 2's plan (its prose and extraction are the test's)."""
    return (model.add("planner", PLAN1).add("writer", PROSE1).add("extractor", DIES)
            .add("planner", PLAN2))


def configured(project, **audit):
    """The project's config after `audit: {key: value, ...}` is added to its project.yaml."""
    text = project.project_file.read_text()
    project.project_file.write_text(text + "audit:\n" + "".join(
        f"  {k}: {v}\n" for k, v in audit.items()))
    return project.config()
