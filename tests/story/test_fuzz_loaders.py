"""Hypothesis: the loaders of everything a user can edit raise nothing but NovelError.

Config layers (project.yaml, presets), scene front matter, memory files, state.yaml,
the JSON answer parser with the plan and extraction validators, and the lore loader
are fed random YAML documents, random text and random bytes. The lore loader raises
nothing at all: what it cannot use becomes a problem line, the rest are entries.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from novel_agent.config.layers import load_config, load_yaml_layer
from novel_agent.errors import NovelError
from novel_agent.files import parse_front_matter, read_yaml
from novel_agent.story.decisions import extraction_from_json, plan_from_json
from novel_agent.story.lore import LoreEntry, parse_lore
from novel_agent.story.memory.read import load_memory
from novel_agent.story.project.folder import Project
from novel_agent.story.project.state import check_state
from novel_agent.story.scenes import load_scene
from novel_agent.text.lenient_json import parse_json

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


@pytest.fixture(scope="module", autouse=True)
def fuzz_folder(tmp_path_factory):
    """One folder for every example's files, removed with the module's tests (each
    example wrote a folder of its own under /tmp, and none was ever removed)."""
    global FOLDER
    FOLDER = tmp_path_factory.mktemp("fuzz")
    yield FOLDER
    shutil.rmtree(FOLDER, ignore_errors=True)


FOLDER: Path | None = None


def written(data: bytes, name: str) -> Path:
    folder = Path(tempfile.mkdtemp(prefix="fuzz", dir=FOLDER))
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
    folder = Path(tempfile.mkdtemp(prefix="fuzz", dir=FOLDER))
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


lore_keys = st.sampled_from(["keys", "content", "priority", "always", "regex", "case_sensitive",
                             "name", "entries", "<<", "notes"])
lore_values = values | st.lists(st.sampled_from(["Mara", "(lamp", "[a-z]+", "", "*", 3]),
                                max_size=3)
lore_entry = st.dictionaries(lore_keys, lore_values, max_size=6)
lore_documents = (lore_entry.map(lambda d: yaml.safe_dump(d, allow_unicode=True))
                  | st.lists(lore_entry, max_size=3).map(
                      lambda d: yaml.safe_dump({"entries": d} if len(d) == 2 else d,
                                               allow_unicode=True))
                  | documents)


@SETTINGS
@given(lore_documents | raw.map(lambda b: b.decode("utf-8", "replace")))
@example("<<: {entries: [{keys: [Mara], content: x}, 3]}\n")    # a merge key (was StopIteration)
@example("keys: ['(lamp']\ncontent: the lamp\nregex: true\n")
@example("- keys: Mara\n  content: she keeps the light\n- 3\n")
def test_lore_parser_never_raises(text):
    entries, problems = parse_lore(text, Path("lore/fuzz.yaml"))
    assert all(isinstance(e, LoreEntry) and e.content.strip() for e in entries)
    assert all(isinstance(p, str) and p.startswith("lore/fuzz.yaml") for p in problems)
