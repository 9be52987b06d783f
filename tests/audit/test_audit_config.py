"""The `audit.*` keys: read by the code, validated, set by the presets."""

from __future__ import annotations

import pytest

from novel_agent.config.layers import load_config
from novel_agent.errors import AuditHoldError, ConfigError
from novel_agent.tick.stages.audit import rules_of
from tests.support.audit_cases import BAD, configured, extraction
from tests.support.scripted import ScriptedModel
from tests.support.ticking import run_ticks


def test_the_presets_set_the_audit_policy_and_its_window():
    modes = {name: (load_config(preset=name).audit.mode, load_config(preset=name).audit.repeat_window)
             for name in ("conservative", "balanced", "aggressive")}
    assert modes == {"conservative": ("report", 3), "balanced": ("report", 5),
                     "aggressive": ("revise", 8)}
    assert load_config().audit.mode == "report" and load_config().audit.llm is False


def test_the_thresholds_reach_the_rule_checks():
    config = load_config(flags={"audit.loop_overdue": 12, "audit.repeat_threshold": 0.7})
    assert (rules_of(config).loop_overdue, rules_of(config).repeat_threshold) == (12, 0.7)
    config = load_config(flags={"generation.loop_overdue_after": 40})
    assert rules_of(config).loop_overdue == 40             # 0: the planner's threshold
    assert load_config(flags={"audit.max_tokens": 321}).max_tokens("auditor") == 321


@pytest.mark.parametrize("key, value, message", [
    ("audit.mode", "block", "must be one of off, report, revise, hold"),
    ("audit.act_on", "fatal", "must be one of minor, major, critical"),
    ("audit.repeat_threshold", 0, "a share above 0"),
    ("audit.repeat_window", -1, "0 or more"),
    ("audit.max_tokens", 0, "must be positive"),
])
def test_bad_audit_values_name_the_key(key, value, message):
    with pytest.raises(ConfigError, match=message) as info:
        load_config(flags={key: value})
    assert info.value.key == key


LEAVES = extraction(["Mara Quill", "Tobin Keel"],
                    status=[{"name": "Tobin Keel", "status": "absent", "how": "sailed away"}])


def absent_then_back(model: ScriptedModel) -> ScriptedModel:
    """Tobin sails away in scene 1 and pours the tea in scene 2: a major finding."""
    from tests.support.audit_cases import PLAN1, PLAN2, PROSE1
    return (model.add("planner", PLAN1).add("writer", PROSE1).add("extractor", LEAVES)
            .add("planner", PLAN2).add("writer", BAD)
            .add("extractor", extraction(["Mara Quill", "Tobin Keel"])))


def test_act_on_sets_the_least_severity_a_hold_acts_on(project):
    config = configured(project, mode="hold", act_on="critical")
    _, second = run_ticks(project, 2, absent_then_back(ScriptedModel()), offline_seed=0,
                          config=config)
    assert [f.severity for f in second.findings] == ["major"] and project.tick() == 2


def test_act_on_major_holds_a_major_finding(project):
    config = configured(project, mode="hold")
    with pytest.raises(AuditHoldError):
        run_ticks(project, 2, absent_then_back(ScriptedModel()), offline_seed=0, config=config)
    assert project.tick() == 1


def test_repeat_window_zero_compares_with_no_scene(project):
    from novel_agent.story.scenes import SceneReader
    from novel_agent.tick.stages.audit import recent_bodies

    run_ticks(project, 2)
    scenes = SceneReader(project.scenes_dir)
    assert recent_bodies(scenes, 3, 0) == [] and len(recent_bodies(scenes, 3, 5)) == 2
