"""`novel lore add|list|show|check`: the lorebook in `lore/*.yaml`."""

from __future__ import annotations

import click

from novel_agent.cli.common import novel_errors, open_project, project_option
from novel_agent.errors import FileFormatError, ProjectError
from novel_agent.files import dump_yaml, write_yaml
from novel_agent.story.lore import check_entry, entry_yaml, find_entry, load_lorebook, new_entry_path


@click.group("lore")
def lore_group() -> None:
    """The lorebook: entries the writer gets when their keys come up."""


@lore_group.command("add")
@click.argument("name")
@click.option("--key", "keys", multiple=True, metavar="WORD",
              help="A word or phrase that fires the entry (repeat for more).")
@click.option("--content", required=True, help="What the writer should know.")
@click.option("--priority", type=int, default=0, show_default=True,
              help="Higher goes in first when space is short.")
@click.option("--always", is_flag=True, help="In every scene, keys or not.")
@click.option("--regex", is_flag=True,
              help="Keys are regular expressions (RE2: no backreferences or lookarounds).")
@click.option("--case-sensitive", is_flag=True, help="Keys match only in the same case.")
@project_option
@novel_errors
def lore_add(name: str, keys: tuple[str, ...], content: str, priority: int, always: bool,
             regex: bool, case_sensitive: bool, project_spec: str | None) -> None:
    """Write a new entry to lore/NAME.yaml (checked first; never over a file).

    \b
    Example:
      novel lore add "The brass locket" --key locket --key "brass locket" \\
          --content "Edda's mother's locket; it holds a key." -p harbour
    """
    project = open_project(project_spec)
    data = entry_yaml(name, keys, content, priority=priority, always=always, regex=regex,
                      case_sensitive=case_sensitive)
    path = new_entry_path(project.lore_dir, name)
    check_entry(data, key=path.stem, source=str(path), line=1)
    project.lore_dir.mkdir(parents=True, exist_ok=True)
    write_yaml(path, data)
    click.echo(f"wrote {path.relative_to(project.root.parent)}")


@lore_group.command("list")
@project_option
@novel_errors
def lore_list(project_spec: str | None) -> None:
    """One line per entry: priority, name, keys; then what could not be read.

    \b
    Example:
      novel lore list -p harbour
    """
    project = open_project(project_spec)
    book = load_lorebook(project.lore_dir)
    if not book.entries and not book.problems:
        click.echo(f"no lore yet: add an entry with `novel lore add` or a file in "
                   f"{project.lore_dir}")
    for e in sorted(book.entries, key=lambda e: (-e.priority, e.key)):
        fires = "always" if e.always else ", ".join(e.keys)
        flags = "".join(f" [{f}]" for f, on in (("regex", e.regex),
                                               ("case", e.case_sensitive)) if on)
        click.echo(f"{e.priority:>4}  {e.key:<20} {e.name[:30]:<30} {fires}{flags}")
    for problem in book.problems:
        click.echo(f"warning: {problem}")


@lore_group.command("show")
@click.argument("name")
@project_option
@novel_errors
def lore_show(name: str, project_spec: str | None) -> None:
    """Print one entry as the writer gets it, and its settings.

    \b
    Example:
      novel lore show locket -p harbour
    """
    project = open_project(project_spec)
    entry = find_entry(load_lorebook(project.lore_dir), name)
    if entry is None:
        raise ProjectError(f"no lore entry '{name}' in {project.lore_dir} (`novel lore list` "
                           "shows them)", path=str(project.lore_dir))
    click.echo(f"{entry.name}  ({entry.source}:{entry.line})")
    click.echo(dump_yaml({"keys": list(entry.keys), "priority": entry.priority,
                          "always": entry.always, "regex": entry.regex,
                          "case_sensitive": entry.case_sensitive}).rstrip())
    click.echo("")
    click.echo(entry.content)


@lore_group.command("check")
@project_option
@novel_errors
def lore_check(project_spec: str | None) -> None:
    """Check every lore file; list each problem with its file and line (exit 1 if any).

    \b
    Example:
      novel lore check -p harbour
    """
    project = open_project(project_spec)
    book = load_lorebook(project.lore_dir)
    for problem in book.problems:
        click.echo(problem)
    if book.problems:
        raise FileFormatError(f"{len(book.problems)} lore problem(s); those entries are "
                              "skipped by every tick until fixed")
    n = len(book.entries)
    click.echo(f"{n} lore entr{'y' if n == 1 else 'ies'}, {'valid' if n == 1 else 'all valid'}")
