"""MkDocs hooks: pages made from the code when the site is built, so they cannot drift.

`<!-- configuration-reference -->` in a page becomes every configuration key with its
type, default, preset values and meaning (novel_agent.config.reference).
"""

from __future__ import annotations

from novel_agent.config.reference import markdown as configuration_reference

MARKERS = {"<!-- configuration-reference -->": configuration_reference}


def on_page_markdown(markdown: str, **_: object) -> str:
    for marker, make in MARKERS.items():
        if marker in markdown:
            markdown = markdown.replace(marker, make())
    return markdown
