"""Hypothesis: the loaders of everything a user can edit raise nothing but NovelError.

Config layers (project.yaml, presets), scene front matter, memory files, state.yaml,
and the JSON answer parser with the plan and extraction validators are fed random
YAML documents, random text and random bytes. (There is no lore loader yet.)
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings, strategies as st

from novel_agent.config import load_config, load_yaml_layer
from novel_agent.decisions import extraction_from_json, plan_from_json
from novel_agent.errors import NovelError
from novel_agent.files import parse_front_matter, read_yaml
from novel_agent.lenient_json import parse_json
from novel_agent.memory import load_memory
from novel_agent.project import Project
from novel_agent.scenes import load_scene
from novel_agent.state import check_state

SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
scalars = st.none() | st.booleans() | st.integers(-10, 10**6) | st.floats(allow_nan=False) \
    | st.text(max_size=12)
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(st.text(max_size=10), inner, max_size=4), max_leaves=12)
keys = st.sampled_from(["llm", "generation", "context", "daemon", "premise", "preset", "tick",
                        "id", "name", "last_seen", "scenes", "a", "b", "text", "scene",
                        "facts", "loops", "relationships", "writer_tiers", "title", "model",
                        "timeout", "checkpoint_summary_interval", "pending_checkpoints"])
known = st.dictionaries(keys, values | st.dictionaries(keys, values, max_size=4), max_size=6)
documents = (known.map(lambda d: yaml.safe_dump(d, allow_unicode=True))
             | values.map(lambda d: yaml.safe_dump(d, allow_unicode=True))
             | st.text(max_size=200))
raw = documents.map(lambda t: t.encode("utf-8")) | st.binary(max_size=200)


def written(data: bytes, name: str) -> Path:
    folder = Path(tempfile.mkdtemp(prefix="fuzz"))
    path = folder / name
    path.write_bytes(data)
    return path


def only_novel_errors(fn, *args) -> None:
    try:
        fn(*args)
    except NovelError:
        pass


@SETTINGS
@given(raw)
def test_config_loader(data):
    path = written(data, "project.yaml")
    only_novel_errors(lambda: load_config(load_yaml_layer(path, extra_keys=("premise", "preset",
                                                                            "title"))))
    only_novel_errors(lambda: Project(path.parent).config())
    only_novel_errors(lambda: Project(path.parent).story())


@SETTINGS
@given(raw, raw)
def test_front_matter_and_scene_loader(head, body):
    data = b"---\n" + head + b"\n---\n" + body
    path = written(data, "scene_004.md")
    only_novel_errors(load_scene, path)
    only_novel_errors(lambda: parse_front_matter(data.decode("utf-8", "replace")))


@SETTINGS
@given(st.sampled_from(["characters/mara.yaml", "locations/tower.yaml", "loops/map.yaml",
                        "relationships/mara--tobin.yaml", "loops.yaml", "relationships.yaml",
                        "facts.yaml"]), raw)
def test_memory_loaders(name, data):
    folder = Path(tempfile.mkdtemp(prefix="fuzz"))
    (folder / name).parent.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(data)
    only_novel_errors(load_memory, folder)


@SETTINGS
@given(raw)
def test_state_loader(data):
    path = written(data, "state.yaml")
    only_novel_errors(lambda: check_state(path, read_yaml(path, {})))


@SETTINGS
@given(documents | known.map(lambda d: __import__("json").dumps(d, default=str)))
def test_json_answer_parser_and_validators(text):
    def parse() -> None:
        data = parse_json(text, stage="planner")
        only_novel_errors(lambda: plan_from_json(data, max_tools=3))   # each alone must hold
        extraction_from_json(data)
    only_novel_errors(parse)
