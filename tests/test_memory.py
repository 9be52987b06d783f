"""Memory files: a broken one is named with the line that is wrong."""

from __future__ import annotations

import pytest

from novel_agent.errors import FileFormatError
from novel_agent.memory import load_memory


@pytest.mark.parametrize("name, text, line, says", [
    ("loops.yaml", "loops:\n- id: a\n  description: x\n- just a string\n", 4,
     "item 2 of 'loops' is 'just a string'"),
    ("facts.yaml", "# facts\n\nfacts: 12\n", 3, "expected 'facts:' followed by a list"),
    ("relationships.yaml", "relationships:\n- {a: A, b: B, kind: k}\n- {a: C, b: D, kind: k}\n"
     "- [C, D]\n", 4, "item 3 of 'relationships'"),
])
def test_a_broken_memory_list_names_its_file_and_line(tmp_path, name, text, line, says):
    (tmp_path / name).write_text(text)
    with pytest.raises(FileFormatError) as info:
        load_memory(tmp_path)
    assert info.value.file == str(tmp_path / name) and info.value.line == line
    assert says in str(info.value)
    assert str(info.value).startswith(f"{tmp_path / name}:{line}: ")
