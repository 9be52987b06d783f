"""What memory knows of who is dead or absent, where each was last and what each holds
reaches every prompt that shows the character, in every form of its item; and the
planner cannot make the dead tell a scene or be in one (issue 37, item 3)."""

from __future__ import annotations

from novel_agent.config.layers import load_config
from novel_agent.context.auditor import auditor_briefing
from novel_agent.context.briefing import propose_briefing
from novel_agent.context.builders import as_of, extractor_briefing, planner_briefing
from novel_agent.context.engine import fit
from novel_agent.context.prompts import render_stage
from novel_agent.context.relevance import Focus, character_items
from novel_agent.context.writer import WriterInputs, propose_writer
from novel_agent.files import read_yaml
from novel_agent.story.decisions import Plan
from novel_agent.story.memory.read import load_memory
from novel_agent.story.memory.store import find_person
from novel_agent.story.scenes import Scene, SceneReader
from novel_agent.text.tokens import TokenCounter
from tests.support import clirunner
from tests.support import story_factory as sf
from tests.support.audit_cases import extraction
from tests.support.scripted import ScriptedModel
from tests.support.ticking import run_ticks

COUNTER = TokenCounter("gpt-4o")
CONFIG = load_config()
DROWNED = {"status": "dead", "status_in": 5, "status_how": "drowned at the weir"}


def memory(**tobin):
    """The synthetic memory, Tobin Keel as given; Mara Quill at the harbour with a key."""
    m = sf.memory()
    m.characters["tobin_keel"].update(first_seen=1, last_seen=5, **tobin)
    m.characters["mara_quill"].update(first_seen=1, last_seen=9, place="The harbour",
                                      place_in=9, holds=["a brass key"])
    return m


def user(messages) -> str:
    return messages[-1]["content"]


# -- the forms ---------------------------------------------------------------------

def test_every_form_of_a_dead_or_absent_characters_card_says_so():
    m = memory(**DROWNED)
    m.characters["ilse"] = {"id": "ilse", "name": "Ilse Varga", "description": "the clerk",
                            "status": "absent", "status_in": 7,
                            "status_how": "sailed for the capital"}
    items = {i.key: i for i in character_items(m, Focus.of(10))}
    tobin, ilse = items["character:tobin_keel"], items["character:ilse"]
    assert tobin.forms == ("Tobin Keel — the ferryman (dead since scene 5: drowned at the weir)",
                           "Tobin Keel — the ferryman (dead since scene 5)",
                           "Tobin Keel (dead)")
    # the dead are scored, not kept whatever the room (issue 50, item 12): a death adds
    # the recency of its scene, as being seen does
    alive = {i.key: i for i in character_items(memory(), Focus.of(10))}["character:tobin_keel"]
    assert not tobin.keep and not ilse.keep
    assert tobin.score == alive.score + 0.5 ** (4 / 10)       # died in scene 5, now 10
    assert all("absent since scene 7" in f for f in ilse.forms[:2])
    assert ilse.forms[-1] == "Ilse Varga (absent)"
    mara = items["character:mara_quill"].forms
    assert mara[0].endswith("now: uneasy; last at The harbour in scene 9; holds a brass key)")


def test_a_card_that_stays_put_shows_a_death_by_its_tick_and_never_where_or_what():
    m = memory(status="dead", status_in=15, status_how="drowned at the weir")
    scenes = [sf.SyntheticScenes(20, lambda t: 50)(t) for t in range(1, 21)]
    before, after = as_of(m, scenes[:10], 10), as_of(m, scenes[:15], 15)
    assert "status" not in before.characters["tobin_keel"]          # alive at tick 10
    assert after.characters["tobin_keel"]["status"] == "dead"
    for then in (before, after):
        assert not {"place", "place_in", "holds"} & set(then.characters["mara_quill"])


# -- the planner -------------------------------------------------------------------

def planner_prompt(m, tick: int, budget: int, scenes=None):
    scenes = scenes or sf.SyntheticScenes(tick - 1, lambda t: 80)
    recent = [scenes(t) for t in range(max(1, tick - 3), tick)]
    history = [scenes(t) for t in range(1, 11)]
    briefing = planner_briefing(sf.story(), m, recent, tick=tick,
                                shares=CONFIG.context.planner_shares,
                                overall_summary=sf.prose(200, 1), focus_count=3,
                                anchor_tick=10, history=history)
    return fit(propose_briefing(briefing, COUNTER, budget), render_stage, COUNTER, budget,
               CONFIG.context.compaction_thresholds)


def test_the_planner_is_told_who_is_dead_and_where_the_living_are():
    fitted = planner_prompt(memory(**DROWNED), 13, 20_000)
    cards = fitted.context.text("characters")
    assert "Tobin Keel — the ferryman (dead since scene 5: drowned at the weir)" in cards
    assert "The harbour" not in cards and "brass key" not in cards   # (they move: below)
    now = fitted.context.text("now")
    assert "Mara Quill — the keeper (now: uneasy; last at The harbour in scene 9; holds a " \
           "brass key)" in now


def test_the_planners_rule_about_the_dead_is_there_only_when_someone_is_gone():
    rule = "never one marked dead or absent"
    told = planner_prompt(memory(**DROWNED), 13, 20_000)
    assert rule in told.messages[0]["content"]
    untold = planner_prompt(memory(), 13, 20_000)      # the same book, no one dead or away
    assert rule not in untold.messages[0]["content"]


def test_a_death_after_the_settled_tick_is_told_where_things_stand():
    fitted = planner_prompt(memory(status="dead", status_in=12, status_how="drowned"), 13,
                            20_000)
    assert "dead" not in fitted.context.text("characters")      # as of tick 10: alive
    assert "Tobin Keel — the ferryman (dead since scene 12: drowned)" in \
        fitted.context.text("now")


def test_under_pressure_the_recently_dead_stay_and_the_long_dead_give_way():
    """A small window and many characters: one who died in the last scenes before the
    settled tick is still there, saying he is dead, ahead of the living seen as lately;
    thirty dead since scene 1 give way like any item (issue 50, item 12: on main every
    dead one was kept whatever the room, and the planner's prompt grew with them)."""
    m = sf.big_memory(120, 40, 40, 0)
    m.characters["tobin_keel"].update(first_seen=1, last_seen=10, status="dead", status_in=10,
                                      status_how="drowned at the weir")
    for n in range(30):
        m.characters[f"person_{n}"].update(first_seen=1, last_seen=1, status="dead",
                                           status_in=1, status_how="lost with the Heron")
    scenes = [Scene(tick=t, body="Mara waits.", title=f"Scene {t}", pov="Mara Quill",
                    location="The harbour", characters=[], summary=["Mara waits."])
              for t in range(1, 13)]
    fitted = planner_prompt(m, 13, 1_500, lambda t: scenes[t - 1])
    assert fitted.tokens <= 1_500
    cards = fitted.context.text("characters")
    assert "Tobin Keel" in cards and "Tobin Keel (dead" in cards.replace(" — the ferryman", "")
    shown = [n.key for n in fitted.notes if n.section == "characters" and n.included]
    assert shown.index("character:tobin_keel") <= 1          # after Mara, in focus
    prompt = user(fitted.messages)
    assert prompt.count("(dead") < 10, prompt                # not thirty-one
    left = [n for n in fitted.notes if n.key.startswith("character:person_") and n.key[17:]
            .isdigit() and int(n.key[17:]) < 30 and not n.included]
    assert left and all(n.reason.startswith("over the characters share") for n in left)


# -- the writer, the extractor, the auditor ------------------------------------------

def writer_prompt(m, budget: int = 30_000, config=CONFIG):
    scenes = sf.SyntheticScenes(9, lambda t: 150)
    plan = Plan(intention="Mara walks the harbour wall.", pov="Mara Quill",
                location="The harbour", title="The Wall", characters=["Mara Quill"])
    inputs = WriterInputs(story=sf.story(), memory=m, plan=plan, last_tick=9, scene=scenes,
                          tick=10)
    return fit(propose_writer(inputs, COUNTER, budget, config.context, config.generation),
               render_stage, COUNTER, budget, config.context.compaction_thresholds)


def test_the_writer_is_told_plainly_who_is_dead_where_it_reads_the_cast():
    fitted = writer_prompt(memory(**DROWNED))
    assert "Tobin Keel — the ferryman (dead since scene 5)" in fitted.context.text("cast")
    brief = user(fitted.messages).split("## Scene 10")[1]
    assert ("Told by Mara Quill (now: uneasy; last at The harbour in scene 9; holds a brass "
            "key). At The harbour. Tobin Keel is dead (since scene 5: drowned at the weir) "
            "and cannot act or speak in this scene, only be remembered.") in brief


def test_the_writer_is_told_of_a_death_its_recent_scenes_record_and_of_no_other():
    m = memory()
    m.characters["ilse"] = {"id": "ilse", "name": "Ilse Varga", "status": "dead",
                            "status_in": 8, "status_how": "word came she drowned"}
    m.characters["bram"] = {"id": "bram", "name": "Bram Ost", "status": "dead"}   # long ago
    brief = user(writer_prompt(m).messages).split("## Scene 10")[1]
    assert "Ilse Varga is dead (since scene 8: word came she drowned) and cannot act" in brief
    assert "Bram" not in brief


def test_the_writers_barest_cast_says_who_is_dead():
    config = load_config(flags={"context.compaction_thresholds": [0.01, 0.02, 0.03]})
    fitted = writer_prompt(memory(**DROWNED), 3_000, config)
    assert fitted.level == 3
    assert fitted.context.text("cast") == "Mara Quill, Tobin Keel (dead), The harbour"


def test_at_its_leanest_the_writers_brief_names_the_recently_dead_within_the_casts_share():
    """Nine scenes, in each of which one of the cast dies: the brief names six of them
    (the newest) with how each died when the prompt has room; at its leanest (issue 50,
    item 12: the brief was pinned, all of it), the most recently dead come first, within
    the cast's share, and the newest scene is not cut for them."""
    m = memory()
    died = {t: f"Person {t} Vale" for t in range(1, 10)}
    for t, name in died.items():
        m.characters[f"p{t}"] = {"id": f"p{t}", "name": name, "first_seen": t, "last_seen": t,
                                 "status": "dead", "status_in": t,
                                 "status_how": "fell from the sea wall in the storm that night"}
    body = "Mara walked the wall. " * 20

    def scene(t: int) -> Scene | None:
        return Scene(tick=t, body=body, title=f"Scene {t}", pov="Mara Quill",
                     location="The harbour", characters=["Mara Quill", died[t]],
                     summary=[f"{died[t]} falls."]) if 1 <= t <= 9 else None

    plan = Plan(intention="Mara walks the harbour wall.", pov="Mara Quill",
                location="The harbour", title="The Wall", characters=["Mara Quill"])

    def brief(budget: int):
        inputs = WriterInputs(story=sf.story(), memory=m, plan=plan, last_tick=9, scene=scene,
                              tick=10)
        fitted = fit(propose_writer(inputs, COUNTER, budget, CONFIG.context, CONFIG.generation),
                     render_stage, COUNTER, budget, CONFIG.context.compaction_thresholds)
        return fitted, fitted.context.text("intention")

    roomy, text = brief(30_000)
    named = [n for n in died.values() if n in text]
    assert named == [died[t] for t in range(4, 10)]          # six: the newest
    assert text.count("(since scene") == 6 and "fell from the sea wall" in text
    lean, text = brief(520)
    assert lean.level == 3 and lean.tokens <= 520 and lean.truncated == []
    named = [n for n in died.values() if n in text]
    assert named and died[9] in named and len(named) < 6
    assert "is dead" in text or "are dead" in text
    share = int(520 * CONFIG.context.cast_share)
    people = text.split("Location:")[0].split("POV:")[1] + text.split("The harbour")[-1]
    assert COUNTER.count(people) <= share + 8, (people, share)


def test_the_extractor_knows_who_is_dead_where_and_holding_what():
    briefing = extractor_briefing(sf.story(), memory(**DROWNED), sf.plan(10), sf.prose(200, 1),
                                  tick=10, shares=CONFIG.context.extractor_shares)
    fitted = fit(propose_briefing(briefing, COUNTER, 8_000), render_stage, COUNTER, 8_000,
                 CONFIG.context.compaction_thresholds)
    assert fitted.context.text("characters") == \
        "Mara Quill (last at The harbour; holds a brass key), Tobin Keel (dead)"


def test_the_auditor_sees_where_the_scenes_people_stand():
    m = memory(**DROWNED)
    briefing = auditor_briefing("Tobin laughed.", [], [], tick=10,
                                people=list(m.characters.values()))
    text = user(fit(propose_briefing(briefing, COUNTER, 4_000), render_stage, COUNTER, 4_000,
                    CONFIG.context.compaction_thresholds).messages)
    assert "## Where the scene's people stand\nTobin Keel — the ferryman (dead since scene 5: " \
           "drowned at the weir)\nMara Quill — the keeper (now: uneasy; last at The harbour " \
           "in scene 9; holds a brass key)" in text


# -- the plan ------------------------------------------------------------------------

def test_the_dead_and_the_absent_tell_no_scene_and_the_dead_are_in_none():
    from novel_agent.tick.stages.plan import among_the_living
    m = memory(**DROWNED)
    m.characters["ilse"] = {"id": "ilse", "name": "Ilse Varga", "status": "absent"}
    find = m.find_character
    plan = Plan(intention="x", pov="Tobin Keel", location="The harbour",
                characters=["Tobin Keel", "Ilse Varga"])
    settled, warnings = among_the_living(plan, find, ["", "Mara Quill"])   # (no last scene)
    assert (settled.pov, settled.characters) == ("Mara Quill", ["Mara Quill", "Ilse Varga"])
    assert warnings == ["the planner's POV Tobin Keel is dead since scene 5; Mara Quill tells "
                        "the scene instead"]
    absent = Plan(intention="x", pov="Ilse Varga", location="The harbour",
                  characters=["Tobin Keel", "Ilse Varga"])
    settled, warnings = among_the_living(absent, find, ["Tobin Keel"])
    assert (settled.pov, settled.characters) == ("Ilse Varga", ["Ilse Varga"])
    assert warnings == ["the planner's POV Ilse Varga is absent, and no one living can tell "
                        "the scene instead",
                        "Tobin Keel is dead since scene 5: left out of the scene's characters"]
    m.characters["mara_quill"]["status"] = "dead"
    settled, warnings = among_the_living(plan, find, ["Mara Quill"])
    assert (settled.pov, settled.characters) == ("Tobin Keel", ["Tobin Keel", "Ilse Varga"])
    assert warnings == ["the planner's POV Tobin Keel is dead since scene 5, and no one living "
                        "can tell the scene instead"]


# -- through the tick -----------------------------------------------------------------

PLAN1 = {"title": "The Weir", "intention": "Tobin drowns while Mara watches.",
         "pov": "Mara Quill", "location": "the weir", "characters": ["Mara Quill", "Tobin Keel"],
         "tool_calls": []}
PLAN2 = {"title": "Tobin Again", "intention": "Tobin walks the quay at dawn.",
         "pov": "Tobin", "location": "the quay", "characters": ["Tobin Keel", "Mara Quill"],
         "tool_calls": []}


DIES = extraction(["Mara Quill", "Tobin Keel"],
                  status=[{"name": "Tobin Keel", "status": "dead", "how": "drowned at the weir"}],
                  items=[{"name": "Mara Quill", "item": "a brass key", "event": "gains"}])


def test_a_death_the_extractor_records_reaches_every_stage_of_the_next_tick(project):
    text = project.project_file.read_text()
    project.project_file.write_text(text + "audit:\n  llm: true\n")
    model = (ScriptedModel().add("planner", PLAN1).add("writer", "Tobin drowned. " * 30)
             .add("extractor", DIES).add("auditor", {"findings": []})
             .add("planner", PLAN2).add("writer", "Mara walked the quay alone. " * 30)
             .add("extractor", extraction(["Mara Quill"], recalled=["Tobin Keel"]))
             .add("auditor", {"findings": []}))
    run_ticks(project, 2, model, config=project.config())
    planner, writer, extractor, auditor = (user(model.calls(s)[1].messages) for s in (
        "planner", "writer", "extractor", "auditor"))
    assert "Tobin Keel (dead since scene 1: drowned at the weir)" in planner
    assert "Tobin Keel is dead (since scene 1: drowned at the weir) and cannot act or speak " \
           "in this scene, only be remembered." in writer
    assert "Told by Mara Quill (last at the weir in scene 1; holds a brass key)" in writer
    assert "Tobin Keel (dead)" in extractor
    assert "Tobin Keel (dead since scene 1: drowned at the weir)\nMara Quill (last at the " \
           "weir in scene 1; holds a brass key)" in auditor
    record = read_yaml(project.plan_path(2))
    assert (record["pov"], record["characters"]) == ("Mara Quill", ["Mara Quill"])
    assert "the planner's POV Tobin Keel is dead since scene 1; Mara Quill tells the scene " \
           "instead" in record["warnings"]
    assert "Tobin Keel" not in read_yaml(project.plan_path(2))["characters"]
    # the intention still has him walk: the writer is told he is only remembered
    assert record["intention"] == ("Tobin walks the quay at dawn. (Tobin Keel is dead since "
                                   "scene 1: only remembered in this scene.)")
    assert record["intention"] in user(model.calls("writer")[1].messages)
    assert "the planner's intention names Tobin Keel, who is dead since scene 1: the writer " \
           "is told they are only remembered" in record["warnings"]


def test_a_dead_character_the_planner_puts_in_the_scene_is_taken_out(project):
    plan = {**PLAN2, "pov": "Mara Quill"}
    model = (ScriptedModel().add("planner", PLAN1).add("writer", "Tobin drowned. " * 30)
             .add("extractor", DIES).add("planner", plan))
    _, second = run_ticks(project, 2, model, offline_seed=0)
    assert second.plan.characters == ["Mara Quill"]
    assert "Tobin Keel is dead since scene 1: left out of the scene's characters" in \
        second.warnings


def test_the_planners_tools_cannot_make_the_dead_act_through_the_tick(project):
    # issue 50, item 10: a plan told by the dead Tobin (the settling gives the scene to
    # Mara) asks for a relationship with him and has him find a loop's answer; on main
    # both landed in memory
    opens = {**PLAN1, "tool_calls": [{"tool": "open_loop", "name": "", "target": "",
                                      "detail": "who drew the map"}]}
    acts = {**PLAN2, "tool_calls": [
        {"tool": "add_relationship", "name": "Mara Quill", "target": "Tobin Keel",
         "detail": "rivals"},
        {"tool": "resolve_loop", "name": "who_drew_the_map", "target": "",
         "detail": "Tobin Keel finds the answer"}]}
    model = (ScriptedModel().add("planner", opens).add("writer", "Tobin drowned. " * 30)
             .add("extractor", DIES).add("planner", acts))
    _, second = run_ticks(project, 2, model, offline_seed=0)
    assert second.plan.pov == "Mara Quill"
    assert "rejected name 'Tobin Keel': Tobin Keel is dead since scene 1: the dead cannot " \
           "begin a relationship, only be remembered" in second.warnings
    memory = load_memory(project.memory_dir)
    assert memory.relationships == []
    [loop] = memory.loops
    assert (loop["status"], loop["resolution"]) == ("resolved", "Mara Quill finds the answer")
    record = read_yaml(project.plan_path(2))
    assert "Resolved loop [who_drew_the_map]: who drew the map — Mara Quill finds the answer " \
           "(given to Mara Quill: Tobin Keel is dead since scene 1)" in record["tool_results"]


def test_novel_context_shows_a_death_written_by_hand(project):
    run_ticks(project, 3)
    pov = find_person(load_memory(project.memory_dir), SceneReader(project.scenes_dir)(3).pov)
    path = project.memory_dir / "characters" / f"{pov['id']}.yaml"
    path.write_text(path.read_text() + "status: dead\nstatus_in: 2\n"
                    "status_how: fell from the signal tower\n")
    planner = clirunner.invoke("context", "-p", "harbour", "--stage", "planner",
                               "--show-prompt", ok=True).output
    assert f"{pov['name']} — " in planner
    assert "(dead since scene 2: fell from the signal tower)" in planner
    writer = clirunner.invoke("context", "-p", "harbour", "--stage", "writer",
                              "--show-prompt", ok=True).output
    assert f"{pov['name']} is dead (since scene 2: fell from the signal tower) and cannot " \
           "act or speak in this scene, only be remembered." in writer
