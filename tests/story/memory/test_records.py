"""The memory records, declared once (story/memory/records.py): each kind's TypedDict is what
mypy checks the code against and what a file is checked against as it is read; the records
read stay plain dicts, as their YAML files hold them."""

from __future__ import annotations

import pytest

from novel_agent.errors import FileFormatError
from novel_agent.story.memory.read import load_memory
from novel_agent.story.memory.records import CHECKS, KINDS

# The fields the checks covered when they were a table of their own (story/memory_schema.py)
CHECKED_BEFORE = {
    "characters": {"id", "name", "description", "traits", "goals", "state", "first_seen",
                   "last_seen", "status", "status_in", "status_how", "place", "place_in",
                   "holds", "voice"},
    "locations": {"id", "name", "description", "first_seen"},
    "loops": {"id", "description", "status", "opened_in", "resolved_in", "scenes",
              "resolution", "payoff", "keep_open"},
    "relationships": {"id", "a", "b", "kind", "description", "since", "updated_in"},
    "facts": {"text", "scene", "witnesses"},
}


def test_every_field_checked_before_is_checked_from_its_declaration():
    for kind, fields in CHECKED_BEFORE.items():
        assert fields <= set(CHECKS[kind]) <= set(KINDS[kind].__annotations__), kind


@pytest.mark.parametrize("folder, text, line, says", [
    ("characters", "name: Mara\naliases: Mara Voss\n", 2, "'aliases' must be a list of text"),
    ("locations", "name: Harbour\nlast_seen: soon\n", 2, "'last_seen' must be a tick number"),
    ("loops", "description: who left the lamp?\npinned: 1\n", 2, "'pinned' must be true or false"),
])
def test_a_field_declared_but_not_checked_before_is_checked_too(tmp_path, folder, text, line,
                                                                says):
    (tmp_path / folder).mkdir()
    (tmp_path / folder / "x.yaml").write_text(text)
    with pytest.raises(FileFormatError) as info:
        load_memory(tmp_path)
    assert info.value.file == str(tmp_path / folder / "x.yaml") and info.value.line == line
    assert says in str(info.value)


def test_the_records_read_are_plain_dicts_and_the_audits_own_fields_are_read_as_found(tmp_path):
    (tmp_path / "characters").mkdir()
    (tmp_path / "characters" / "mara.yaml").write_text(
        "name: Mara\nlost: a map\nappearance: grey\nmine: 3\nstate: ~\n")
    mara = load_memory(tmp_path).characters["mara"]
    assert type(mara) is dict
    assert mara == {"name": "Mara", "lost": "a map", "appearance": "grey", "mine": 3,
                    "state": None, "id": "mara"}
