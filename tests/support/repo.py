"""The repository the tests run in: its root (for a subprocess's PYTHONPATH and cwd) and
its README (for the tests that check what it says)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
