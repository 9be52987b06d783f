"""The `novel` command line: Click adapters over the library, nothing more."""

from __future__ import annotations

from novel_agent.cli.main import cli


def main() -> None:
    """Entry point of the `novel` console script."""
    cli()


__all__ = ["cli", "main"]
