"""The naming guard: no newcomer is named so a reader would take them for someone known.

`fresh_names` goes over what a plan would create (the people and places its tools
create and its POV, cast and location that memory does not know) before its tools
run: a name that nomenclature.name_clash flags (one or two letters from a known
name, or a person's first name already in use) is replaced, all through the plan
(its intention and title too), by a name from the book's pool (story/name_pool.py),
so the writer writes the new name and memory and the scene agree. The pool is
asked for (`pool()`, which makes it the first time) only when a name must go.

`unconfusable` does the extractor's part: a new character it reads in the prose
(already written) whose name the rule flags is not made a character of memory; the
scene keeps the name and the audit's nomenclature rule, the same rule, reports it.
Pure functions of the plan, the extraction and memory.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import replace

from novel_agent.story.decisions import Extraction, Plan, ToolCall
from novel_agent.story.memory.store import Memory, find_person
from novel_agent.story.name_pool import NamePool, pick_person, pick_place
from novel_agent.text.names import normalize_name, person_problem
from novel_agent.text.nomenclature import Clash, NameBook, first_name, name_book, name_clash

NameCheck = Callable[[str], "str | None"]


def memory_book(memory: Memory) -> NameBook:
    """The names memory holds: its characters' (and their aliases) and its places'. The
    last one made is given again while memory names the same (a tick asks for it when
    it reads the pool, offers it and renames from it, and its `free` answers are kept)."""
    global _last
    people = list(memory.characters.values())
    names = ([str(c.get("name", "")) for c in people],
             [str(p.get("name", "")) for p in memory.locations.values()],
             [str(a) for c in people for a in c.get("aliases") or [] if a])
    if _last is None or _last[0] != names:
        _last = names, name_book(names[0], names[1], aliases=names[2])
    return _last[1]


_last: tuple[tuple[list[str], list[str], list[str]], NameBook] | None = None


def newcomers(plan: Plan, memory: Memory, check: NameCheck) -> list[tuple[str, str]]:
    """(name, "people" or "places") of everyone and everywhere `plan` would create, once
    each, full names before short ones: those of its create tools, its POV, cast and
    location, that memory does not know and the tools would not reject as no names."""
    people = [c.name for c in plan.tool_calls if c.tool == "create_character"]
    places = [c.name for c in plan.tool_calls if c.tool == "create_location"]
    found: dict[str, tuple[str, str]] = {}
    for name in (n.strip() for n in [*people, plan.pov, *plan.characters]):
        if name and find_person(memory, name) is None and not check(name) \
                and not person_problem(name):
            found.setdefault(normalize_name(name), (name, "people"))
    for name in (n.strip() for n in [*places, plan.location]):
        if name and memory.find_location(name) is None and not check(name):
            found.setdefault("@" + normalize_name(name), (name, "places"))
    return sorted(found.values(), key=lambda item: -len(item[0].split()))


def fresh_names(plan: Plan, memory: Memory, pool: Callable[[], NamePool], *,
                check: NameCheck, seed: str | int = 0) -> tuple[Plan, list[str]]:
    """`plan` with each newcomer whose name a reader would take for a known one (or for
    another newcomer of the plan) named from `pool()` instead, everywhere the plan says
    it; a line for each. A short form of a newcomer's name ("Mara" of "Mara Fenn") is
    the same newcomer, renamed with it."""
    book, renames, lines = memory_book(memory), {}, []
    given: dict[str, str] = {}            # a newcomer's first name -> the name it takes
    arriving = newcomers(plan, memory, check)
    for name, kind in arriving:
        words = name.split()
        if kind == "people" and len(words) == 1 and normalize_name(name) in given:
            new = given[normalize_name(name)]          # "Mara" of this plan's "Mara Fenn"
            if new != name:
                renames[name] = new
            continue
        clash = _clash(name, kind, book)
        new = _another(name, kind, clash, book, pool, seed) if clash else name
        if clash and new != name:
            renames[name] = new
            lines.append(f"the planner's new {'character' if kind == 'people' else 'place'} "
                         f"{clash.says(name)}: named '{new}' instead (from names.yaml)")
        elif clash:
            lines.append(f"{clash.says(name)}, and the book's names have none free")
        book = book.add(new, kind)
        if kind == "people":
            given[normalize_name(words[0])] = new.split()[0]
    keep = [str(e.get("name", "")) for e in (*memory.characters.values(),
                                              *memory.locations.values())]
    keep += [name for name, _ in arriving if name not in renames]
    return (renamed(plan, renames, keep) if renames else plan), lines


def _clash(name: str, kind: str, book: NameBook) -> Clash | None:
    """name_clash, and for a person named by a first name alone that memory cannot tell
    whose (two Maras), a repeated first name."""
    clash = name_clash(name, book, kind)
    if clash is None and kind == "people" and len(name.split()) == 1 and \
            first_name(name) in book.firsts:
        clash = Clash(book.firsts[first_name(name)], "first name")
    return clash


def _another(name: str, kind: str, clash: Clash, book: NameBook, pool: Callable[[], NamePool],
             seed: str | int) -> str:
    """The name a newcomer takes instead of `name` (`name` when the pool has none free): a
    person keeps a surname unless the whole name is a variant."""
    if kind == "places":
        return pick_place(pool(), book, seed=seed) or name
    surname = " ".join(name.split()[1:]) if clash.how != "variant" else ""
    return pick_person(pool(), book, words=len(name.split()), seed=seed,
                       surname=surname) or name


def renamed(plan: Plan, renames: dict[str, str], keep: Iterable[str] = ()) -> Plan:
    """`plan` with each old name of `renames` written as its new one, as a whole name,
    case aside, in every field; not where it is part of a name of `keep` ("Mara" of
    "Mara Quill" stays) nor of a longer old name."""
    olds, keep = {old.casefold() for old in renames}, list(keep)
    known = "\n".join(keep).casefold()         # hundreds of names: an old one is looked for
    inside = [old for old in renames if old.casefold() in known]     # in them all at once
    within = re.compile("|".join(rf"(?<!\w){re.escape(old)}(?!\w)" for old in inside),
                        re.IGNORECASE)
    kept = [k for k in keep if inside and any(o.casefold() in k.casefold() for o in inside)
            and k.casefold() not in olds and within.search(k)]
    names = sorted([*renames, *kept], key=len, reverse=True)
    pattern = re.compile("|".join(rf"(?<![\w'’]){re.escape(n)}(?![\w’-])" for n in names),
                         re.IGNORECASE)
    folded = {old.casefold(): new for old, new in renames.items()}

    def say(text: str) -> str:
        return pattern.sub(lambda m: folded.get(m.group(0).casefold(), m.group(0)), text)

    calls = [ToolCall(c.tool, say(c.name), say(c.target), say(c.detail)) for c in plan.tool_calls]
    return replace(plan, intention=say(plan.intention), title=say(plan.title),
                   pov=say(plan.pov), location=say(plan.location),
                   characters=[say(c) for c in plan.characters], tool_calls=calls)


def unconfusable(extraction: Extraction, memory: Memory,
                 new_name: Callable[[str], str | None]) -> tuple[Extraction, list[str]]:
    """`extraction` without the new characters (`new_name(name)`: the name the prose
    writes, None when no new character would be made of it) a reader would take for a
    known one or for another of them; a line for each left out."""
    book, kept, lines = memory_book(memory), [], []
    for item in extraction.characters:
        name = item.get("name", "")
        written = new_name(name) if find_person(memory, name) is None else None
        clash = name_clash(written, book) if written else None
        if clash is not None:
            lines.append(f"the scene's new character {clash.says(str(written))}: not made a "
                         "character of memory")
            continue
        if written:
            book = book.add(written, "people")
        kept.append(item)
    return (replace(extraction, characters=kept) if lines else extraction), lines
