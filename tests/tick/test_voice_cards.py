"""The extractor proposes a voice card for someone who speaks in the scene and has none;
an author's card is never asked for nor changed; a replay of the records makes the same
cards."""

from __future__ import annotations

import json

import yaml

from novel_agent.models.offline import OfflineModel
from novel_agent.models.providers import LOCAL
from novel_agent.revision.rederive import extraction_of
from novel_agent.story.project.recovery import reconciled
from novel_agent.text.speakers import lines
from novel_agent.tick.pipeline import tick
from novel_agent.tick.session import Session
from tests.support.scripted import ScriptedModel
from tests.support.ticking import run_ticks

PLAN = {"title": "At the Quay", "intention": "Mara asks Tobin about the map.",
        "pov": "Mara Quill", "location": "the quay", "characters": ["Mara Quill", "Tobin Keel"],
        "tool_calls": []}
PROSE = ('Mara Quill came down to the quay at dusk. The ferry rocked at its rope.\n\n'
         '"Mark me, the map is his," Mara said. "Aye, his hand drew it."\n\n'
         'Tobin Keel spat into the water. "Right then. And what of it?"\n\n'
         'She did not answer him. The tide went out and took the light with it, and the two '
         'of them stood a long time on the stones before either moved.')
CARD = {"name": "Mara Quill", "diction": "clipped, nautical", "habits": "short sentences",
        "tics": ["mark me", "aye"], "never": ["okay"]}


def scripted(extraction: dict) -> ScriptedModel:
    model = ScriptedModel(otherwise=OfflineModel())
    model.add("planner", PLAN).add("writer", PROSE).add("extractor", extraction)
    return model


def extraction(**more) -> dict:
    return {"summary": ["Mara asks Tobin about the map.", "Tobin shrugs it off.",
                        "The tide goes out."], "facts": [], "characters": [],
            "loops_opened": [], "loops_resolved": [], "relationships": [], **more}


def card_of(project, cid):
    return (yaml.safe_load((project.memory_dir / "characters" / f"{cid}.yaml").read_text())
            or {}).get("voice")


def test_who_says_each_line_is_read_from_the_narration_around_it():
    said = lines(PROSE, {"mara": ["Mara Quill"], "tobin": ["Tobin Keel"]})
    assert [(line.text, line.speaker) for line in said] == [
        ("Mark me, the map is his,", "mara"), ("Aye, his hand drew it.", "mara"),
        ("Right then. And what of it?", "tobin")]


def test_the_extractor_is_asked_for_the_cards_of_those_who_speak_and_its_answer_is_kept(project):
    run_ticks(project, 1)
    tobin = extraction(voices=[CARD, {"name": "Tobin Keel", "diction": "a ferryman's",
                                      "habits": "", "tics": ["right then"], "never": []}])
    model = scripted(tobin)
    result = run_ticks(project, 1, model)[0]
    asked = model.calls("extractor")[0]
    voices = asked.json_schema["properties"]["voices"]
    assert voices["maxItems"] == 2 and "voices" in asked.json_schema["required"]
    assert '"voices": [{"name", "diction", "habits", "tics", "never"}] for Mara Quill, ' \
        'Tobin Keel, who speak' in asked.messages[0]["content"]
    assert card_of(project, "mara_quill") == {"by": "extractor", "diction": "clipped, nautical",
                                               "habits": "short sentences",
                                               "tics": ["mark me", "aye"], "never": ["okay"]}
    assert card_of(project, "tobin_keel") == {"by": "extractor", "diction": "a ferryman's",
                                               "tics": ["right then"]}
    assert "voice card of Mara Quill: diction, habits, tics, never" in result.memory_changes
    record = yaml.safe_load(project.plan_path(result.tick).read_text())
    assert extraction_of(record).voices[0]["tics"] == ["mark me", "aye"]   # a replay's too


def test_an_authors_card_is_not_asked_for_nor_changed_and_a_full_one_is_not_asked_again(project):
    run_ticks(project, 1)
    run_ticks(project, 1, scripted(extraction(voices=[CARD])))
    path = project.memory_dir / "characters" / "tobin_keel.yaml"
    data = yaml.safe_load(path.read_text())
    data["voice"] = {"tics": ["right then"]}           # thin, but the author's: no `by`
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    model = scripted(extraction(voices=[{**CARD, "name": "Tobin Keel", "never": ["sorry"]}]))
    run_ticks(project, 1, model)
    asked = model.calls("extractor")[0]
    assert "voices" not in asked.json_schema["properties"]     # Mara's is full, Tobin's his
    assert '"voices"' not in asked.messages[0]["content"]
    assert card_of(project, "tobin_keel") == {"tics": ["right then"]}


def test_a_local_extractor_is_asked_one_card(project):
    run_ticks(project, 1)
    model = scripted(extraction())
    with reconciled(project), Session.open(project, project.config(),
                                           make_model=lambda: model) as session:
        session.provider = LOCAL
        tick(session)
    schema = model.calls("extractor")[0].json_schema
    assert schema["properties"]["voices"]["maxItems"] == 1
    assert "present" not in json.dumps(schema)            # and lean otherwise, as before
