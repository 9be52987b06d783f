"""`novel ARGS` through Click's CliRunner, the one way the tests run the CLI in-process."""

from __future__ import annotations

from click.testing import CliRunner, Result

from novel_agent.cli import cli


def invoke(*args: str, ok: bool | None = None, **options) -> Result:
    """Run `novel ARGS` (exceptions not caught: a traceback fails the test). With ok=True
    exit 0 is asserted, with ok=False a non-zero exit; CliRunner.invoke's options pass on."""
    options.setdefault("catch_exceptions", False)
    result = CliRunner().invoke(cli, list(args), **options)
    if ok is not None:
        assert (result.exit_code == 0) == ok, result.output
    return result
