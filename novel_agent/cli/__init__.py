"""The `novel` command line: Click adapters over the library, nothing more."""

from __future__ import annotations

import os
import sys

from novel_agent.cli.main import cli


def main() -> None:
    """Entry point of the `novel` console script. Output piped to a reader that stops early
    (`novel status | head -1`) ends quietly, as Python's documentation on SIGPIPE says:
    what is left to write goes to /dev/null, exit status 1."""
    try:
        try:
            cli()
        finally:
            sys.stdout.flush()      # a reader gone fails here, not at the interpreter's exit
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        sys.exit(1)


__all__ = ["cli", "main"]
