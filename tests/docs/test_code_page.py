"""The page on how the code is laid out (docs/how-it-works/code.md) names files a
newcomer opens next: every one it names is there, and the stage it shows being added
is the one tests/tick/test_new_stage.py adds."""

from __future__ import annotations

import os
import re

from tests.support.repo import ROOT

PAGE = ROOT / "docs" / "how-it-works" / "code.md"
# a path in backquotes: something.py, a folder/ or a folder/file, never a flag or a key
NAMED = re.compile(r"`((?:[\w.-]+/)*[\w.<>*-]+(?:\.py|\.j2|/))`")


def named_paths(text: str) -> list[str]:
    return [p for p in NAMED.findall(text) if "<" not in p and "*" not in p]


def where(path: str) -> list[str]:
    """Where a path the page names may be: from the repository's root, the package's, or
    the tests' helpers' (the page names those in a list that says `tests/support/`)."""
    return [str(ROOT / base / path) for base in ("", "novel_agent", "tests/support")]


def test_every_file_and_folder_the_page_names_is_there():
    paths = named_paths(PAGE.read_text())
    assert len(paths) > 60                      # the page is read, not skipped
    missing = [p for p in paths if not any(os.path.exists(w) for w in where(p))]
    assert missing == []


def test_a_path_that_is_not_there_is_found_missing():
    assert named_paths("see `tick/nowhere.py` and `text/`") == ["tick/nowhere.py", "text/"]
    assert not any(os.path.exists(w) for w in where("tick/nowhere.py"))


def test_the_stage_the_page_adds_is_the_one_the_test_adds():
    page = PAGE.read_text()
    module = (ROOT / "tests" / "support" / "blurb_stage.py").read_text()
    for line in ("def build(ctx: TickContext, d: TickDraft) -> TickDraft:",
                 'STAGE = Stage("blurb", build=build, ask=ask, apply=apply)',
                 'return replace(d, answers={**d.answers, "blurb": blurb})'):
        assert line in page and line in module
    declared = re.search(r'declare\(StageSpec\("blurb", "Blurb", "blurb", ([^\n]+)',
                         (ROOT / "tests" / "tick" / "test_new_stage.py").read_text())
    assert declared and '"blurb.j2"' in declared.group(1)
    assert 'declare(StageSpec("blurb", "Blurb", "blurb"' in page
