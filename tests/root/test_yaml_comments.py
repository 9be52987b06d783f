"""An author's comments kept when the program writes a YAML file over them
(novel_agent/yaml_comments.py): a file nobody annotated is written byte for byte as
dump_yaml writes it; an annotated one keeps every comment (above a key or an item, at
the end of a line, at the top and at the end), its key order, quotes, block and flow
styles and indentation, with the new values put in; the text always reads as the new
text reads."""

from __future__ import annotations

import math

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from novel_agent.files import dump_yaml
from novel_agent.yaml_comments import author_comments, keep_comments, walk_comments

MARA = """\
# Mara: keep her alive until act 3.
id: mara
name: Mara Quill   # her full name
traits:
- brave  # from scene 1
- quiet
# what she wants, in her words
goals:
- find the map
state: awake
last_seen: 3
# the end of my notes
"""


def written(old: str, data, width: float = 100) -> str:
    out = keep_comments(old, dump_yaml(data, width=width), width=width)
    assert yaml.safe_load(out) == data
    return out


def test_a_file_nobody_annotated_is_the_new_text_itself():
    data = yaml.safe_load(MARA)
    new = dump_yaml({**data, "state": "asleep"})
    assert keep_comments(None, new) is new
    assert keep_comments(dump_yaml(data), new) is new
    header = "# The program's own note.\n"
    assert keep_comments(header + dump_yaml(data), header + new) == header + new
    assert keep_comments("note: 'a # inside quotes'\n", new) is new
    assert keep_comments("sample: |-\n  # a line of the sample\n", new) is new


def test_comments_stay_where_they_were_as_values_change_and_keys_come():
    data = yaml.safe_load(MARA)
    data.update(state="asleep in the tower", last_seen=7, aliases=["Mara"])
    data["traits"].append("stubborn")
    assert written(MARA, data) == """\
# Mara: keep her alive until act 3.
id: mara
name: Mara Quill   # her full name
traits:
- brave  # from scene 1
- quiet
- stubborn
# what she wants, in her words
goals:
- find the map
state: asleep in the tower
last_seen: 7
aliases:
- Mara
# the end of my notes
"""


def test_a_key_taken_out_leaves_its_comments_above_what_followed_it():
    data = yaml.safe_load(MARA)
    del data["name"], data["goals"]
    assert written(MARA, data) == """\
# Mara: keep her alive until act 3.
id: mara
# her full name
traits:
- brave  # from scene 1
- quiet
# what she wants, in her words
state: awake
last_seen: 3
# the end of my notes
"""


def test_key_order_is_the_files_and_a_new_key_goes_after_the_one_it_follows():
    old = "# mine\nstate: awake\nid: mara\nname: Mara\n"
    assert written(old, {"id": "mara", "name": "Mara", "state": "awake", "first_seen": 2}) == \
        "# mine\nstate: awake\nfirst_seen: 2\nid: mara\nname: Mara\n"
    assert written(old, {"id": "mara", "name": "Mara", "state": "awake", "first_seen": 2,
                         "last_seen": 3}) == \
        "# mine\nstate: awake\nfirst_seen: 2\nlast_seen: 3\nid: mara\nname: Mara\n"
    assert written(old, {"id": "mara", "aliases": [], "name": "Mara", "state": "awake"}) == \
        "# mine\nstate: awake\nid: mara\naliases: []\nname: Mara\n"


OUTLINE = """\
# my outline
acts:
  - name: The Discovery
    chapters:
      - number: 1                # chapters are numbered
        title: "The Drowned Man"
        scenes: 4                # its target length
        beats:
          # the heart of it
          - id: '1.1'
            what: Mara finds the map.
            tension: 3           # keep it low
          - id: '1.2'
            what: Mara hides it.
sample: |-   # my passage
  A passage, kept
  as a block.
words: {the: 50.1, a: 20.5}
"""


def test_quotes_block_and_flow_styles_indentation_and_aligned_comments_are_kept():
    data = yaml.safe_load(OUTLINE)
    chapter = data["acts"][0]["chapters"][0]
    chapter.update(title="The Drowned Woman", scenes=12)
    chapter["beats"].insert(1, {"id": "1.3", "what": "A new beat."})
    del chapter["beats"][0]["tension"]
    data.update(sample="Another passage,\nits lines kept.", words={"the": 40.0, "a": 10.0})
    assert written(OUTLINE, data, math.inf) == """\
# my outline
acts:
  - name: The Discovery
    chapters:
      - number: 1                # chapters are numbered
        title: "The Drowned Woman"
        scenes: 12               # its target length
        beats:
          # the heart of it
          - id: '1.1'
            what: Mara finds the map.
          - id: '1.3'
            what: A new beat.
            # keep it low
          - id: '1.2'
            what: Mara hides it.
sample: |-   # my passage
  Another passage,
  its lines kept.
words: {the: 40.0, a: 10.0}
"""


def test_list_items_are_matched_so_a_comment_stays_with_its_own():
    old = "beats:\n- id: a\n  what: one\n# on b\n- id: b  # b's\n  what: two\n"
    assert written(old, {"beats": [{"id": "b", "what": "two"}]}) == \
        "beats:\n# on b\n- id: b  # b's\n  what: two\n"
    names = "names:\n- Edda\n- Tomas  # my grandfather\n- Ilse\nmade_by: me\n"
    assert written(names, {"names": ["Tomas", "Brann"], "made_by": "me"}) == \
        "names:\n- Tomas  # my grandfather\n- Brann\nmade_by: me\n"


def test_what_the_round_trip_cannot_keep_gets_the_new_text():
    new = dump_yaml({"a": [1, 2], "b": [1, 2]})
    assert keep_comments("# mine\na: &x [1, 2]\nb: *x\n", new) is new     # an alias
    assert keep_comments("# mine\na: [1, 2\n", new) is new                # not YAML
    assert keep_comments("# mine\n", new) is new                          # nothing to keep


def test_author_comments_are_those_the_program_did_not_write():
    assert author_comments(MARA, "") == [
        "# Mara: keep her alive until act 3.", "# her full name", "# from scene 1",
        "# what she wants, in her words", "# the end of my notes"]
    assert author_comments("# header\na: 1  # mine\n", "# header\na: 2\n") == ["# mine"]
    assert [line for line, _ in walk_comments(MARA)] == [1, 3, 5, 7, 12]


# -- any file, any comments, any new values -----------------------------------------------

words = st.text(st.characters(codec="utf-8", exclude_categories=["C", "Z"]) | st.just(" "),
                max_size=12).map(str.strip)
scalars = st.none() | st.booleans() | st.integers(-10, 10**6) | \
    st.floats(allow_nan=False, allow_infinity=False) | words
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(st.sampled_from(["id", "name", "state", "traits", "a",
                                                         "b", "scenes", "what"]), inner,
                                        max_size=4), max_leaves=14)
documents = st.dictionaries(st.sampled_from(["id", "name", "description", "traits", "goals",
                                             "state", "first_seen", "beats", "facts"]),
                            values, min_size=1, max_size=6)


@st.composite
def annotated(draw):
    """A document as dump_yaml writes it, comments put in between its lines and at their
    ends (numbered, each once), and the document's data."""
    data = draw(documents)
    lines = dump_yaml(data).splitlines()
    out, n = [], 0
    for line in lines:
        indent = len(line) - len(line.lstrip())
        if draw(st.integers(0, 3)) == 0:
            n += 1
            out.append(" " * indent + f"# above {n}")
        if draw(st.integers(0, 3)) == 0:
            n += 1
            line += f"  # end {n}"
        out.append(line)
    if draw(st.booleans()):
        n += 1
        out.append(f"# last {n}")
    return "\n".join(out) + "\n", data


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(annotated(), documents, st.booleans())
def test_any_annotated_file_keeps_every_comment_and_reads_as_the_new_data(old, new, same):
    text, data = old
    if same:
        new = data
    out = keep_comments(text, dump_yaml(new))
    assert yaml.safe_load(out) == new
    kept = {comment for _, comment in walk_comments(out)}
    assert set(author_comments(text)) <= kept
    if same:
        assert out == text


def test_a_file_whose_values_are_the_same_is_left_as_its_author_wrote_it():
    # ruamel.yaml quotes 0E0 (a float in YAML 1.2, a string in PyYAML's 1.1): written
    # over with the same values, the file must not change a byte (found by Hypothesis)
    text = "# a sailor's note\nid: tomas\nstate: 0E0  # as written\n"
    assert keep_comments(text, dump_yaml({"id": "tomas", "state": "0E0"})) == text
