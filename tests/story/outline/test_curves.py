"""The tension curves (outline.curve): each one's shape, its range, and the targets it gives
beats the model or the author left without a tension."""

from __future__ import annotations

import pytest

from novel_agent.config.layers import load_config
from novel_agent.config.settings import CURVES
from novel_agent.errors import ConfigError
from novel_agent.story.outline.curves import EPISODES, beat_progress, fill_tensions, target_tension
from novel_agent.story.outline.file import parse_outline
from tests.story.outline.test_file import OUTLINE

GRID = [i / 200 for i in range(201)]


def curve(name: str) -> list[float]:
    return [target_tension(name, p) for p in GRID]


@pytest.mark.parametrize("name", CURVES)
def test_every_curve_stays_between_0_and_10_and_clamps_outside_the_book(name):
    values = curve(name)
    assert all(0 <= v <= 10 for v in values)
    assert target_tension(name, -1) == values[0] and target_tension(name, 2) == values[-1]
    assert values[0] <= 3              # every book starts calm


def test_three_act_climbs_to_a_climax_near_the_end_then_resolves():
    values = curve("three_act")
    peak = GRID[values.index(max(values))]
    assert 0.85 <= peak <= 0.95 and max(values) == 10
    assert values[-1] < 5 and values[50] < values[100] < values[150]   # a quarter, half, 3/4


def test_five_act_peaks_at_the_middle_falls_then_has_a_last_suspense():
    values = curve("five_act")
    peak = GRID[values.index(max(values))]
    assert 0.45 <= peak <= 0.55
    falling, suspense = target_tension("five_act", 0.7), target_tension("five_act", 0.85)
    assert falling < max(values) and suspense > falling and values[-1] < suspense


def test_rising_never_falls():
    values = curve("rising")
    assert values == sorted(values) and values[-1] == 10


def test_serial_rises_to_a_cliffhanger_each_episode_on_a_slow_climb():
    values = curve("serial")
    drops = [i for i in range(1, len(values)) if values[i] < values[i - 1] - 1]
    assert len(drops) == EPISODES - 1          # a new episode starts lower
    first, last = values[:len(values) // EPISODES], values[-len(values) // EPISODES:]
    assert sum(last) / len(last) > sum(first) / len(first)


def test_an_unknown_curve_is_refused_by_name_and_by_the_configuration(tmp_path):
    with pytest.raises(ValueError, match="unknown tension curve 'flat'"):
        target_tension("flat", 0.5)
    from novel_agent.config.layers import load_yaml_layer
    path = tmp_path / "project.yaml"
    path.write_text("outline:\n  curve: flat\n")
    with pytest.raises(ConfigError, match="outline.curve: must be one of three_act, five_act, "
                                          "rising, serial, not 'flat'") as caught:
        load_config(load_yaml_layer(path))
    assert (caught.value.file, caught.value.line) == (str(path), 2)


def test_beats_without_a_tension_take_the_curve_s_target_at_their_place():
    outline = parse_outline(OUTLINE, "outline.yaml")        # beats 1.1 (3), 1.10, 2.1
    filled = fill_tensions(outline, "rising")
    assert [b.tension for b in filled.beats()] == [
        3, round(target_tension("rising", beat_progress(1, 3))),
        round(target_tension("rising", beat_progress(2, 3)))]
    assert [b.tension for b in filled.beats()] == [3, 6, 9]
    assert fill_tensions(filled, "three_act") == filled      # given tensions are kept
    assert beat_progress(0, 4) == 0.125 and beat_progress(3, 4) == 0.875
