"""The documentation site builds with `mkdocs build --strict` (every link and anchor found,
every page in the nav, no warning), and the strict build fails when a link breaks, a link
names an anchor its page does not have, or a page is left out of the nav. Needs the `docs`
extra (mkdocs, mkdocs-material, mkdocs-click), which scripts/test installs."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.repo import ROOT

pytest.importorskip("mkdocs", reason="mkdocs is not installed (the `docs` extra: pip install -e '.[docs]')")


def build(root: Path, site: Path) -> subprocess.CompletedProcess[str]:
    """`mkdocs build --strict` of the site whose mkdocs.yml is in root, into site (run from
    root, as the snippets' base path is; the hooks import this checkout's novel_agent)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(site)],
                          cwd=root, env=env, capture_output=True, text=True, timeout=300)


def copy_of_the_site(folder: Path) -> Path:
    """mkdocs.yml, docs/ and what the pages include (CHANGELOG.md) copied into folder."""
    folder.mkdir()
    shutil.copy(ROOT / "mkdocs.yml", folder)
    shutil.copy(ROOT / "CHANGELOG.md", folder)
    shutil.copytree(ROOT / "docs", folder / "docs")
    return folder


def test_the_site_builds_with_no_warning(tmp_path):
    done = build(ROOT, tmp_path / "site")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "site" / "index.html").is_file()
    assert (tmp_path / "site" / "reference" / "commands" / "index.html").is_file()


def break_a_link(docs: Path) -> str:
    """A link to a page that does not exist, in getting-started.md."""
    page = docs / "getting-started.md"
    page.write_text(page.read_text() + "\nSee [the missing guide](guides/no-such-guide.md).\n")
    return "guides/no-such-guide.md"


def break_an_anchor(docs: Path) -> str:
    """A link to a command the command reference does not have, in getting-started.md."""
    page = docs / "getting-started.md"
    page.write_text(page.read_text() + "\nSee [`novel fly`](reference/commands.md#novel-fly).\n")
    return "#novel-fly"


def leave_a_page_out(docs: Path) -> str:
    """A page that is in docs/ but not in mkdocs.yml's nav."""
    (docs / "guides" / "orphan.md").write_text("# Orphan\n\nNo nav entry leads here.\n")
    return "guides/orphan.md"


def test_the_strict_build_fails_on_a_broken_link_or_anchor_or_a_page_not_in_the_nav(tmp_path):
    root = copy_of_the_site(tmp_path / "copy")
    named = [damage(root / "docs") for damage in (break_a_link, break_an_anchor, leave_a_page_out)]
    done = build(root, tmp_path / "site")
    assert done.returncode != 0
    for what in named:      # one build says them all (strict fails at the end, after all warnings)
        assert what in done.stderr, done.stderr
