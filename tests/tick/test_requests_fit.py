"""Every request of every stage fits the window with its answer, retries included (issue 37).

A fitted prompt fits its budget by construction; what a stage sends after it is longer:
a JSON repair quotes the bad answer, a continuation carries the draft so far, the
writer's "copied" re-write asks once more, and the audit's revise request holds the
prompt, the draft and the findings. Each of them, through the real SDK to a test
server, must leave the window room for its answer: prompt tokens (the project's
counter) + max_tokens <= window.
"""

from __future__ import annotations

import json

import pytest
import yaml

from novel_agent.errors import ModelError, ModelResponseError
from novel_agent.models.ask import ask_json
from novel_agent.models.base import Request
from novel_agent.story.project.folder import Project
from novel_agent.tick.session import Session, counter_for
from tests.support.audit_cases import DIES, extraction
from tests.support.clirunner import invoke
from tests.support.fake_openai import FakeOpenAIServer
from tests.support.responders import stage_of
from tests.support.scripted import ScriptedModel
from tests.support.ticking import run_ticks

WINDOW = 1200
SMALL = {"preset": "aggressive",       # revise on a major finding; every prompt filled to 95%
         "llm": {"planner_max_tokens": 300, "writer_max_tokens": 400,
                 "extractor_max_tokens": 300, "summarizer_max_tokens": 300},
         "context": {"window": WINDOW},
         "generation": {"scene_min_words": 60, "scene_max_words": 300,
                        "checkpoint_summary_interval": 3},
         "audit": {"llm": True, "max_tokens": 300}}

PLAN1 = {"title": "The Weir", "intention": "Tobin drowns while Mara watches.", "pov": "Mara Quill",
         "location": "the weir", "characters": ["Mara Quill", "Tobin Keel"], "tool_calls": []}
PLAN2 = {"title": "The Lamp", "intention": "Mara keeps the lamp alone.", "pov": "Mara Quill",
         "location": "Skerry Light", "characters": ["Mara Quill"], "tool_calls": []}
PLAN3 = {"title": "Tea", "intention": "Mara takes tea at the weir.", "pov": "Mara Quill",
         "location": "the weir", "characters": ["Mara Quill", "Tobin Keel"], "tool_calls": []}
# scenes of 150 words, then a draft of 300 that the audit sends back: with the findings
# and the writer's prompt as it was, the revise request leaves the answer 141 tokens
WEIR = ("The river ran high at the weir that night, brown with the rain of three days. Tobin "
        "Keel went out on the boards to free the jammed gate, and Mara Quill watched him from "
        "the bank with the lantern held high. ")
LAMP = ("Mara Quill climbed the hundred steps at dusk and trimmed the wick by feel, the way her "
        "father had taught her, while the shutters knocked in the wind off the sound. ")
MORNING = ("The kettle ticked on the stove while the gulls argued on the roof, and the light "
           "came grey through the salt on the glass. ")
BAD = ("The fog lifted from the weir at dawn. Tobin laughed and poured the tea for Mara. "
       + MORNING * 12)
GOOD = ("The fog lifted from the weir at dawn. Mara poured the tea alone and thought of Tobin. "
        + MORNING * 12)


NOT_JSON = "Here is what I found: " + "the scene is long and full of water. " * 60


def answers():
    """Each stage's answers in turn; every kind of longer request happens at least once:
    a JSON repair by the planner, the extractor and the auditor, a writer's continuation,
    its re-write of a copied draft, and the audit's revision."""
    weir = WEIR * 4
    return {
        "planner": [NOT_JSON, json.dumps(PLAN1), json.dumps(PLAN2), json.dumps(PLAN3)],
        "writer": [{"content": " ".join(weir.split()[:30]), "finish_reason": "length"},
                   " " + " ".join(weir.split()[30:]),          # the cut-off scene continued
                   weir,                                       # scene 2 copies scene 1: anew
                   LAMP * 5,
                   BAD,                                        # Tobin, dead, pours the tea
                   GOOD],                                      # the revision
        "extractor": [NOT_JSON, json.dumps(DIES), json.dumps(extraction(["Mara Quill"])),
                      json.dumps(extraction(["Mara Quill", "Tobin Keel"])),
                      json.dumps(extraction(["Mara Quill"]))],
        "auditor": [NOT_JSON],
    }


def stage(body) -> str:
    """The stage that sent `body` (the auditor's told by its system prompt)."""
    said = stage_of(body)
    return "auditor" if said == "other" and "check a draft scene" in body["messages"][0][
        "content"] else said


def responder(queues):
    def answer(body):
        stage_name = stage(body)
        if stage_name == "summarizer":
            return " ".join(WEIR.split()[:80])
        queue = queues.get(stage_name)
        if queue:
            return queue.pop(0)
        return json.dumps({"findings": []}) if stage_name == "auditor" else "?"
    return answer


def configure(root, values=SMALL) -> None:
    """project.yaml with `values` merged in (a section's keys into it)."""
    path = root / "project.yaml"
    data = yaml.safe_load(path.read_text())
    for key, value in values.items():
        if isinstance(value, dict):
            data.setdefault(key, {}).update(value)
        else:
            data[key] = value
    path.write_text(yaml.safe_dump(data))


def test_every_request_of_every_stage_fits_the_window_retries_included(openai_project):
    configure(openai_project)
    counter = counter_for(Project(openai_project).config())
    queues = answers()
    with FakeOpenAIServer(responder(queues)) as server:
        result = invoke("tick", "-p", "harbour", "-n", "3", "--base-url",
                        server.base_url, "--model", "gpt-4o-mini")
    assert result.exit_code == 0, result.output
    assert not any(queues.values()), queues          # every scripted answer was asked for
    sent = []
    for request in server.requests:
        body = request["json"]
        if not request["path"].endswith("/chat/completions"):
            continue
        limit = body.get("max_completion_tokens") or body.get("max_tokens")
        sent.append((stage(body), counter.count_messages(body["messages"]), limit))
    over = [(stage, tokens, limit) for stage, tokens, limit in sent if tokens + limit > WINDOW]
    assert over == [], f"over the {WINDOW}-token window: {over} (of {sent})"
    assert "the revision was kept" in result.output


def test_a_revision_that_cannot_fit_is_not_asked_for_and_the_first_draft_stands(project):
    # the scene's prompt at its leanest, a draft of 300 words and the findings leave the
    # 1,200-token window (less its margin) 380 tokens, under the 385 a scene of 220 words needs
    configure(project.root, {**SMALL, "audit": {"llm": False},
                             "generation": {**SMALL["generation"], "scene_min_words": 220}})
    model = (ScriptedModel().add("planner", PLAN1).add("writer", WEIR * 4).add("extractor", DIES)
             .add("planner", PLAN3).add("writer", BAD)
             .add("extractor", extraction(["Mara Quill", "Tobin Keel"])))
    _, second = run_ticks(project, 2, model, offline_seed=0)
    assert len(model.calls("writer")) == 2                # the revision was never sent
    [note] = [n for n in second.notices if n.startswith("the revision failed")]
    assert note.startswith("the revision failed (writer: the revise request (the scene's "
                           "prompt at its leanest, the draft and the findings) is ")
    assert note.endswith("of the 1,200-token window (margin 256) for the answer, under the 385 "
                         "a scene of 220 words needs); the first draft stands")
    assert "Tobin laughed" in project.scene_path(2).read_text()


def test_nothing_is_sent_over_the_window(project):
    configure(project.root)
    model = ScriptedModel().add("writer", "Never sent.")
    with Session.open(project, project.config(), make_model=lambda: model) as session:
        prompt = [{"role": "user", "content": WEIR * 20}]
        tokens = session.counter.count_messages(prompt)
        with pytest.raises(ModelError) as caught:
            session.model.complete(Request(stage="writer", messages=prompt,
                                           max_tokens=WINDOW - tokens + 1))
        assert str(caught.value) == (f"writer: the request was not sent: {tokens:,} prompt "
                                     f"tokens and {WINDOW - tokens + 1:,} for the answer are "
                                     f"over the model's {WINDOW:,}-token window")
        assert model.calls("writer") == [] and session.model.drain() == []
        session.model.complete(Request(stage="writer", messages=prompt,
                                       max_tokens=WINDOW - tokens))      # exactly fits
    assert len(model.calls("writer")) == 1


def test_a_repair_with_no_room_for_its_answer_is_not_asked_for():
    model = ScriptedModel().add("planner", NOT_JSON)
    with pytest.raises(ModelResponseError) as caught:
        ask_json(model, "planner", [{"role": "user", "content": "Plan."}], 300, {},
                 lambda data: data, room=lambda messages: 0)
    assert "(no repair was asked: the window leaves no room for its answer)" in str(caught.value)
    assert len(model.calls("planner")) == 1 and caught.value.call is not None


def test_the_summarizer_asks_for_no_more_than_its_budget_kept_room_for(project):
    # llm.summarizer_max_tokens over the model's longest answer (4,096 for an unknown
    # model): the budget keeps room for 4,096, and so must the request
    configure(project.root, {"llm": {"summarizer_max_tokens": 5000},
                             "generation": {"checkpoint_summary_interval": 1}})
    model = ScriptedModel()
    run_ticks(project, 1, model, offline_seed=0)
    asked = {r.max_tokens for r in model.calls("summarizer")}
    assert asked == {4096}
