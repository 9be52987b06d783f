"""How the docs tests read a page and judge an output (tests/support/doc_examples.py and
doc_runner.py): what runs, what is skipped and why, and what shape a shown line stands for."""

from __future__ import annotations

import time

import pytest

from tests.support import doc_runner
from tests.support.doc_examples import Command, Example, PageError, Setup, first_missing, parse, shape, strip_comment
from tests.support.doc_runner import Outcome, novel_args, problem

PAGE = """# A page

<!-- doc-setup
novel new harbour --premise "A keeper."
# a comment
printf 'x\\n' > draft.md
-->
```console
$ novel tick -p harbour
tick 1 of harbour
  …
$ novel status -p harbor
Error: no project 'harbor'
```

```sh
novel scenes list -p harbour   # every scene
cd projects
novel lore add "A #1 key" --key k --content c -p harbour
```

<!-- doc-test: skip — needs a real server -->
```sh
novel serve
```

```yaml
# project.yaml
name: harbour
```

  ```console
  $ novel inspect -p harbour
  harbour/
  ```
"""


def test_a_page_is_its_setup_and_examples_in_order():
    setup, console, sh, skipped, indented = parse(PAGE)
    assert isinstance(setup, Setup)
    assert [c.text for c in setup.lines] == ['novel new harbour --premise "A keeper."', "printf 'x\\n' > draft.md"]
    assert isinstance(console, Example) and console.kind == "console" and console.line == 8
    assert [(c.text, c.line) for c in console.commands] == [("novel tick -p harbour", 9),
                                                            ("novel status -p harbor", 12)]
    assert console.commands[0].shown == ["tick 1 of harbour", "  …"]
    assert [c.expects_failure() for c in console.commands] == [False, True]
    assert [c.text for c in sh.commands] == ["novel scenes list -p harbour",
                                             'novel lore add "A #1 key" --key k --content c -p harbour']
    assert skipped.skip == "needs a real server" and sh.skip is None
    assert indented.commands[0].text == "novel inspect -p harbour" and indented.commands[0].shown == ["harbour/"]


@pytest.mark.parametrize("text, says", [
    ("<!-- doc-test: skip -->\n```sh\nnovel serve\n```\n", "must say why"),
    ("<!-- doc-test: skip — a server -->\nSome prose.\n```sh\nnovel serve\n```\n", "not followed by an example"),
    ("<!-- doc-test: skipp — typo -->\n```sh\nnovel serve\n```\n", "not a doc-test comment"),
    ("```console\nCreated project\n$ novel new a\n```\n", "output before the first"),
    ("<!-- doc-setup\nnovel new a\n", "without its closing"),
])
def test_a_page_that_breaks_the_conventions_is_refused(text, says):
    with pytest.raises(PageError, match=says):
        parse(text)


@pytest.mark.parametrize("shown, actual", [
    ("  plan         0.3s     366 → 155   tokens", "plan  12.75s  1,366 → 95 tokens"),
    ('  → harbour/scenes/scene_001.md  316 words  "The Ledger at Tower"',
     '→ harbour/scenes/scene_001.md  1,016 words  "The Tide at Market"'),
    ("Created project 'harbour' at …/projects/harbour (preset balanced).",
     "Created project 'harbour' at /tmp/x/projects/harbour (preset balanced)."),
    ("entry … (tick 10: The Lantern)", "entry e02e0dbc (tick 10: The Lantern)"),
])
def test_numbers_quoted_titles_and_an_ellipsis_may_differ(shown, actual):
    assert shape(shown).fullmatch(actual.strip())


@pytest.mark.parametrize("shown, actual", [
    ("Created project 'harbour'", "Created project 'delta'"),
    ("tick 1 of harbour", "tick one of harbour"),
    ("daemon      not running", "daemon      running"),
    ("3 scenes", "3 scenes, 894 words"),
])
def test_words_may_not(shown, actual):
    assert not shape(shown).fullmatch(actual)


def test_the_shown_lines_must_appear_in_order():
    output = "one 1\ntwo 2\nthree 3\n"
    assert first_missing(["one 5", "…", "", "three 7"], output) is None
    assert first_missing(["three 3", "one 1"], output) == "one 1"
    assert first_missing(["four 4"], output) == "four 4"


def test_a_comment_is_a_hash_outside_quotes_after_a_space():
    assert strip_comment("novel tick -p harbour   # one scene") == "novel tick -p harbour"
    assert strip_comment('novel lore add "A #1" -p x  # why') == 'novel lore add "A #1" -p x'
    assert strip_comment("novel search a#b") == "novel search a#b"


@pytest.mark.parametrize("line, args", [
    ("novel tick -p harbour -n 3", ["tick", "-p", "harbour", "-n", "3"]),
    ("novel new harbour --premise \"A drowned man's map > all.\"", ["new", "harbour", "--premise",
                                                                    "A drowned man's map > all."]),
    ("novel status -p harbour | head -1", None),
    ("novel export -p harbour > out.md", None),
    ("novel serve --projects ~/books", None),
    ("novel tick -p $NAME", None),
    ("NOVEL_LLM_MODEL=x novel tick", None),
    ("printf 'x' > y.md", None),
])
def test_a_novel_line_without_shell_syntax_runs_in_process(line, args):
    assert novel_args(line) == args


@pytest.mark.parametrize("text, shown, outcome, wrong", [
    ("novel tick", ["tick 1 of harbour"], Outcome(0, "tick 1 of harbour\n"), None),
    ("novel doctor", ["problem  …"], Outcome(1, "problem  scenes/scene_010.md is missing\n"), None),
    ("novel status -p x", ["Error: no project 'x'"], Outcome(1, "Error: no project 'x'\n"), None),
    ("novel status -p x", ["Error: no project 'x'"], Outcome(0, "project x\n"), "it succeeded"),
    ("novel tick", [], Outcome(1, "Error: tick 21 cannot start\n"), "it failed (exit 1)"),
    ("novel tick --bogus", [], Outcome(2, "Error: No such option\n"), "it failed (exit 2)"),
    ("novel doctor", [], Outcome(1, "problem  scenes/scene_010.md is missing\n"), "it failed (exit 1)"),
    ("grep x y", [], Outcome(1, ""), "it failed (exit 1)"),
    ("novel tick", ["tick 1 of delta"], Outcome(0, "tick 1 of harbour\n"), "not in its output"),
    ("novel tick", [], Outcome(1, "", crash="it raised:\nTraceback ..."), "it raised"),
])
def test_what_a_command_did_is_judged_against_its_page(text, shown, outcome, wrong):
    found = problem(Command(text, 1, shown), outcome)
    assert (found is None) if wrong is None else (wrong in found)


def test_a_command_without_a_bound_fails_rather_than_hangs(monkeypatch, tmp_path):
    monkeypatch.setattr(doc_runner, "TIMEOUT", 0.3)
    monkeypatch.setattr(doc_runner, "invoke", lambda *args, **options: time.sleep(5))
    started = time.monotonic()
    for outcome in doc_runner.run("novel run -p harbour", tmp_path), doc_runner.run("sleep 5", tmp_path):
        assert outcome.exit_code == -1 and "still running" in outcome.crash
    assert time.monotonic() - started < 3
