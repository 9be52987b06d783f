"""Where the package's own files are: presets, the model table, templates."""

from __future__ import annotations

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
TEMPLATES_DIR = PACKAGE_DIR / "context" / "templates"


def config_dir() -> Path:
    """The directory holding presets (`<name>.yaml`) and `models.yaml`.

    In a checkout (or an editable install) this is the repository's `configs/`;
    a wheel install ships the same files as `novel_agent/configs/`.
    """
    for candidate in (PACKAGE_DIR.parent / "configs", PACKAGE_DIR / "configs"):
        if (candidate / "balanced.yaml").is_file():
            return candidate
    return PACKAGE_DIR.parent / "configs"
