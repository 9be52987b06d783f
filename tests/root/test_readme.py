"""The README is one screen that starts with the two commands; what it links to exists;
the changelog's newest version is the package's."""

from __future__ import annotations

import re

import novel_agent
from tests.support.repo import DOCS, README, ROOT, page

TWO_COMMANDS = "./scripts/demo", "./scripts/test"


def test_the_readme_is_one_screen_and_starts_with_the_two_commands():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 150
    assert lines[0].startswith("# ")
    first = lines[lines.index("```sh") + 1:]
    first = first[:first.index("```")]
    assert [line.split()[0] for line in first] == list(TWO_COMMANDS)
    assert lines.index("```sh") < 5            # before anything else is said
    for command in TWO_COMMANDS:
        assert (ROOT / command).is_file()
    ci = (ROOT / ".ci" / "run").read_text()
    assert ci.rstrip().endswith("exec ./scripts/test")


def test_what_the_readme_links_to_exists():
    text = README.read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    local = [t for t in targets if not re.match(r"[a-z]+://", t)]
    assert len(local) > 20
    missing = [t for t in local if not (ROOT / t).exists()]
    assert missing == []
    documented = {str(p.relative_to(ROOT)) for p in DOCS.rglob("*.md")}
    linked = {t for t in local if t.startswith("docs/")}
    pages = documented - {"docs/index.md", "docs/changelog.md"}
    assert pages <= linked, f"pages the README does not point to: {pages - linked}"


def test_the_changelog_s_newest_version_is_the_package_s():
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    versions = re.findall(r"^## (\d+\.\d+\.\d+)", text, re.M)
    assert versions[0] == novel_agent.__version__
    assert versions == sorted(versions, key=lambda v: tuple(map(int, v.split("."))),
                              reverse=True)
    assert '--8<-- "CHANGELOG.md"' in page("changelog.md")
    assert 'version = {attr = "novel_agent.__version__"}' in \
        (ROOT / "pyproject.toml").read_text()
