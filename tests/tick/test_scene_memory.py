"""What a scene does to memory is one code (novel_agent/tick/scene_memory.py) in the
tick, in the audit's revision (audit.mode: revise) and in a replay: the extraction is
checked against the prose it was read from, in each."""

from __future__ import annotations

from novel_agent.files import read_yaml
from novel_agent.revision.rederive import replay_range
from novel_agent.story.memory.files import memory_files
from novel_agent.story.memory.read import load_memory
from novel_agent.story.memory.store import Memory
from tests.support.audit_cases import BAD, GOOD, book, configured, extraction
from tests.support.scripted import ScriptedModel
from tests.support.ticking import run_ticks

COPIED = "The fog lifted at the weir"                 # a sentence of GOOD, word for word
OWN = "Mara takes her tea without Tobin now"          # the extractor's own words


def test_the_audits_revision_is_applied_as_the_tick_applies_an_extraction(project):
    config = configured(project, mode="revise")
    model = (book(ScriptedModel()).add("writer", BAD)
             .add("extractor", extraction(["Mara Quill", "Tobin Keel"]))
             .add("writer", GOOD).add("extractor", extraction(["Mara Quill"],
                                                              facts=[COPIED, OWN])))
    _, second = run_ticks(project, 2, model, offline_seed=0, config=config)
    assert "the revision was kept" in " ".join(second.notices)
    facts = [f["text"] for f in load_memory(project.memory_dir).facts]
    assert OWN in facts and COPIED not in facts       # a copied sentence is no fact
    assert read_yaml(project.plan_path(2))["memory_changes"][0] == f"fact: {OWN}"
    derived = replay_range(project, Memory(), 1, 2, config)
    assert memory_files(derived, project.memory_dir) == \
        memory_files(load_memory(project.memory_dir), project.memory_dir)
