"""The repository the tests run in: its root (for a subprocess's PYTHONPATH and cwd), its
README and its documentation's pages (for the tests that check what they say)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"


def hooks() -> ModuleType:
    """docs/hooks.py, the site's hooks (the pages it makes from the code)."""
    spec = importlib.util.spec_from_file_location("docs_hooks", DOCS / "hooks.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def page(name: str) -> str:
    """The text of a documentation page, e.g. page("guides/costs.md")."""
    return (DOCS / name).read_text(encoding="utf-8")


def block(name: str, starting: str) -> str:
    """The text of the code block of page `name` from `starting` (its first line, or the
    start of it) to the block's end."""
    text = page(name)
    start = text.index(starting)
    return text[start:text.index("```", start)]
