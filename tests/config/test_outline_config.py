"""The outline settings: the sizes `novel outline` makes an outline at (small on an embedded
local model when left at 0), each value checked with the file and line that set it."""

from __future__ import annotations

import math

import pytest

from novel_agent.config.layers import load_config, load_yaml_layer
from novel_agent.config.settings import OutlineConfig, OutlineSizes
from novel_agent.errors import ConfigError
from novel_agent.story.outline.position import STRETCH


def test_sizes_left_at_0_are_a_novel_s_or_a_short_story_s_on_an_embedded_model():
    outline = load_config().outline
    assert (outline.curve, outline.acts) == ("three_act", 3)
    assert (outline.revise, outline.revise_every) == ("auto", 1)
    assert outline.sizes(small=False) == OutlineSizes(acts=3, chapters=24, beats=3, scenes=4)
    small = outline.sizes(small=True)
    assert small == OutlineSizes(acts=3, chapters=3, beats=2, scenes=2)
    # a short story of 6 to 10 scenes, each chapter's stretch included (a 1.5B keeps it whole)
    longest_book = small.chapters * math.floor(small.scenes * STRETCH)
    assert 6 <= small.chapters * small.scenes and longest_book <= 10


def test_sizes_set_are_taken_and_never_fewer_chapters_than_acts():
    assert OutlineConfig(acts=5, chapters=10, beats_per_chapter=1,
                         scenes_per_chapter=6).sizes(small=True) == OutlineSizes(5, 10, 1, 6)
    assert OutlineConfig(acts=5).sizes(small=True).chapters == 5


@pytest.mark.parametrize(("text", "said", "line"), [
    ("outline:\n  acts: 0\n", "outline.acts: must be at least 1", 2),
    ("outline:\n  acts: 4\n  chapters: 2\n", "outline.chapters: must be 0 (auto) or at least "
                                             "outline.acts", 3),
    ("outline:\n  beats_per_chapter: -1\n", "outline.beats_per_chapter: must be 0 (auto) or more",
     2),
    ("outline:\n  scenes_per_chapter: many\n", "outline.scenes_per_chapter must be int", 2),
    ("outline:\n  curves: rising\n", "unknown key 'outline.curves'", 2),
    ("outline:\n  revise: always\n", "outline.revise: must be one of auto, off, not 'always'", 2),
    ("outline:\n  revise_every: 0\n", "outline.revise_every: must be at least 1", 2),
])
def test_a_bad_outline_setting_names_its_file_and_line(tmp_path, text, said, line):
    path = tmp_path / "project.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as caught:
        load_config(load_yaml_layer(path))
    assert said in str(caught.value) and (caught.value.file, caught.value.line) == (str(path), line)
