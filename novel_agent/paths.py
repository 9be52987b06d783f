"""Where the package's own files are: presets, the model table, templates."""

from __future__ import annotations

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
TEMPLATES_DIR = PACKAGE_DIR / "context" / "templates"


def config_dir() -> Path:
    """The directory holding presets (`<name>.yaml`) and `models.yaml`: the package's
    `configs/` (the repository's `configs/` is a link to it, so both name one folder)."""
    return PACKAGE_DIR / "configs"
