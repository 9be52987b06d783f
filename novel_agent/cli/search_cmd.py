"""`novel search`: what the project's index finds, with scores and where it points."""

from __future__ import annotations

import json

import click

from novel_agent.cli.common import novel_errors, open_project, project_option
from novel_agent.index.documents import KINDS
from novel_agent.index.search import points_to, search
from novel_agent.index.sync import open_index


@click.command("search")
@click.argument("query")
@project_option
@click.option("--kind", type=click.Choice(KINDS), default=None,
              help="Only this kind of document.")
@click.option("--limit", type=click.IntRange(1, 500), default=10, show_default=True,
              help="At most this many results.")
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON.")
@novel_errors
def search_cmd(query: str, project_spec: str | None, kind: str | None, limit: int,
               as_json: bool) -> None:
    """Search the story: scenes, facts, characters, places, loops, lore, summaries.

    Words match in any form ("lanterns" finds "lantern"); "quoted phrases" match
    whole. Results are ranked by BM25 (higher is better), each with the scene it
    points to. The index is brought up to date with the files first.

    \b
    Example:
      novel search "brass locket" -p harbour
      novel search lighthouse --kind fact --limit 5
    """
    project = open_project(project_spec)
    index, line = open_index(project)
    try:
        rows = search(index, query, kind, limit)
    finally:
        index.close()
    if line:
        click.echo(f"note: {line}", err=True)
    if as_json:
        click.echo(json.dumps([{"key": r.key, "kind": r.kind, "score": round(r.score, 4),
                                "tick": r.tick, "points_to": points_to(r), "title": r.title,
                                "snippet": r.snippet} for r in rows], indent=2,
                              ensure_ascii=False))
        return
    if not rows:
        click.echo(f"nothing found for {query!r}")
        return
    for r in rows:
        where = points_to(r)
        label = r.title or (f"fact from scene {r.tick}" if r.kind == "fact" else r.key)
        click.echo(f"{r.score:6.2f}  {r.kind:<12} {label}"
                   + (f"  ({where})" if where else ""))
        text = " ".join((r.snippet or r.body).split())
        if text:
            click.echo(f"        {text[:160]}")
