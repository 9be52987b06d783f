"""MkDocs hooks: pages made from the code when the site is built, so they cannot drift.

- `<!-- configuration-reference -->` becomes every configuration key with its type,
  default, preset values and meaning (novel_agent.config.reference);
- `<!-- command-reference -->` becomes every `novel` command with its help, usage and
  options, as mkdocs-click's generator writes them from the Click commands, tidied
  (`command_reference`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from novel_agent.config.reference import markdown as configuration_reference

NO_DEFAULT = ("`Sentinel.UNSET`", "None")   # Click 8.3's "no default", and mkdocs-click's


def command_reference() -> str:
    """Every command's heading (anchored `novel-<command>[-<subcommand>]`), help, usage
    and options table, from mkdocs-click's generator (the one its `::: mkdocs-click`
    block runs) over the CLI; then `tidy`."""
    from mkdocs_click._docs import make_command_docs

    from novel_agent.cli import cli
    return "\n".join(tidy(make_command_docs("novel", cli, depth=1, style="table",
                                            has_attr_list=True)))


def tidy(lines: Iterable[str]) -> Iterator[str]:
    """What the generator writes that reads badly on a page: the indented examples of a
    command's help (which Markdown runs into one line) become a `sh` block, and a default
    Click leaves unset (`Sentinel.UNSET`, or None) becomes a dash."""
    fenced, example = False, False
    for line in lines:
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("  ") and not line.startswith("   ") \
                and not line.lstrip().startswith("|"):
            if not example:
                yield ""
                yield "```sh"
                example = True
            yield line[2:]
            continue
        if example:
            yield "```"
            example = False
            if line:
                yield ""
        if line.startswith("| ") and not fenced:
            for unset in NO_DEFAULT:
                if line.endswith(f"| {unset} |"):
                    line = line[: -len(unset) - 2] + "— |"
        yield line
    if example:
        yield "```"


MARKERS = {"<!-- configuration-reference -->": configuration_reference,
           "<!-- command-reference -->": command_reference}


def on_page_markdown(markdown: str, **_: object) -> str:
    for marker, make in MARKERS.items():
        if marker in markdown:
            markdown = markdown.replace(marker, make())
    return markdown


def anchors(markdown: str) -> list[str]:
    """The `{ #anchor }` of each heading of a page the hooks made (for the tests)."""
    return re.findall(r"^#+ .*\{ #([a-z0-9-]+)", markdown, re.M)
