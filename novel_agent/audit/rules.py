"""The rule checks: a scene's extraction against what memory knows, no LLM.

`check(scene)` runs every rule over one `SceneInput` (the new scene's prose,
plan and extraction, memory as it stood before the scene's knowledge was
recorded, the story's clock, the last K scenes) and returns Findings, each
with its ConStory subtype, a severity and two quotes. Pure: no I/O, no clock.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from novel_agent.audit.clock import (
    WEEKDAYS,
    Clock,
    against_season,
    counted_weekday,
    days_between,
    parse_clock,
    placed,
    season_of,
    weekday_sentence,
)
from novel_agent.audit.findings import RULES, Finding
from novel_agent.audit.knowledge import item_key, knows, looks, lost_entry, match_fact, words_of
from novel_agent.audit.voices import voice_findings
from novel_agent.story.decisions import Extraction
from novel_agent.story.memory.records import Character
from novel_agent.story.memory.store import Memory, find_person
from novel_agent.text.cleanup import sentences
from novel_agent.text.names import normalize_name, person_problem
from novel_agent.text.nomenclature import NameBook, name_book, name_clash

# A sentence that puts a dead character in a dream, a memory or a picture is no contradiction.
NOT_IN_PERSON = re.compile(r"\b(?:dream\w*|remember\w*|recall\w*|memor\w+|ghost\w*|portrait|"
                           r"photograph\w*|grave|funeral|mourn\w*|late|used to|once had)\b", re.I)
# A sentence that tells again how an object was parted with is not the one that uses it.
RETOLD = re.compile(NOT_IN_PERSON.pattern + r"|\bhad\s+(?:\w+\s+)?(?:given|lost|handed|sold|"
                    r"dropped|left|parted)\b", re.I)
TRAVEL_MINUTES = 60  # a move between two places with no travel told takes at least this
SHINGLE = 5          # words per shingle for the repeated-passage check
MIN_PARAGRAPH = 20   # words: shorter paragraphs are not compared
OPENING = 12         # words of a scene that make its opening


@dataclass(frozen=True)
class Rules:
    """The thresholds of the rule checks (config `audit.*`)."""

    loop_overdue: int = 30          # ticks a loop may go untouched
    repeat_threshold: float = 0.5   # Jaccard of 5-word shingles that makes a repeat


@dataclass
class SceneInput:
    """One scene to check and what it is checked against."""

    tick: int
    prose: str
    extraction: Extraction
    memory: Memory                 # before this scene's knowledge is recorded
    title: str = ""
    pov: str = ""
    location: str = ""
    clock: Clock | None = None     # the story's clock before this scene
    clock_scene: int = 0
    recent: list[tuple[int, str, str]] = field(default_factory=list)   # (tick, title, body)
    rules: Rules = field(default_factory=Rules)
    # The ids of the characters and places known before this scene, and those the planner
    # introduced on purpose (create_character, create_location); None: all of memory's.
    # A name that entered memory only because the scene used it is checked as a variant.
    known_people: set[str] | None = None
    known_places: set[str] | None = None
    cast: list[str] = field(default_factory=list)   # the scene's people as planned


def check(scene: SceneInput) -> list[Finding]:
    """Every rule's findings for `scene`, in rule order."""
    out: list[Finding] = []
    for rule in RULE_CHECKS:
        out += rule(scene)
    return out


def _finding(kind: str, severity: str, scene: SceneInput, quote: str, against: str,
             against_scene: int, message: str) -> Finding:
    return Finding(kind=kind, subtype=RULES[kind], severity=severity, scene=scene.tick,
                   quote=quote, against=against, against_scene=against_scene, message=message)


def quote_for(prose: str, *names: str, thing: str = "", avoid: re.Pattern | None = None) -> str:
    """The first sentence of `prose` naming every one of `names` (people) and `thing` (an
    object or a place), else one naming the first of them; "" when none does. Whole
    names are looked for before short forms (a person's first name or surname, a thing's
    last word: "key" of "the brass key"); a sentence `avoid` matches is passed over."""
    terms = [*((n, False) for n in names if n), *([(thing, True)] if thing else [])]
    return sentence_naming(prose, terms, avoid) or sentence_naming(prose, terms[:1], avoid)


def sentence_naming(prose: str, terms: list[tuple[str, bool]],
                    avoid: re.Pattern | None = None) -> str:
    """The first sentence of `prose` naming every (term, is a thing) of `terms` by its whole
    name, else by short forms too (see quote_for); "" when none does."""
    found = [s for s in sentences(prose) if not (avoid and avoid.search(s))]
    for short in (False, True):
        for s in found:
            if all(_names(s, t, thing, short) for t, thing in terms):
                return s
    return ""


def _names(sentence: str, term: str, thing: bool, short: bool) -> bool:
    low, t = sentence.lower(), term.lower().strip()
    whole = [t, item_key(t)] if thing else [t]
    if not t or any(w and re.search(rf"\b{re.escape(w)}\b", low) for w in whole):
        return True
    if not short:
        return False
    if thing:                     # a thing or a place by its last word ("key", "quay")
        key = item_key(t).split()
        return bool(key) and bool(re.search(rf"\b{re.escape(key[-1])}\b", low))
    parts = t.split()             # a person by their first name, or their surname alone
    return any(len(w) > 2 and w[0].isalpha() and w not in ("the", "a", "an") and
               bool(re.search(rf"\b{re.escape(w)}\b", low))
               for w in {parts[0], parts[-1]})


def person(memory: Memory, name: str) -> Character | None:
    """The character `name` names (find_person), unless what memory holds under it is no
    person's name ("Tuesday", "She": made by an import before names were checked): a
    finding about a name that is no known character's is no finding."""
    who = find_person(memory, name)
    return who if who is not None and not person_problem(str(who.get("name", ""))) else None


def _key(memory: Memory, name: str) -> str:
    """One key for every form of a known character's name (else the name's own)."""
    who = find_person(memory, name)
    return f"#{who.get('id')}" if who is not None else normalize_name(name)


def _present(scene: SceneInput) -> list[str]:
    """Who is in the scene in person: the extraction's `present`, else the POV."""
    recalled = {normalize_name(n) for n in scene.extraction.recalled}
    names = list(dict.fromkeys([*scene.extraction.present]))
    return [n for n in names if normalize_name(n) not in recalled]


# -- the rules ---------------------------------------------------------------------

def dead_or_absent(scene: SceneInput) -> list[Finding]:
    """A dead or absent character acts or speaks (not in a dream or a memory)."""
    out = []
    revived = {normalize_name(s.get("name", "")) for s in scene.extraction.status}
    for name in _present(scene):
        who = person(scene.memory, name)
        if who is None or who.get("status") not in ("dead", "absent"):
            continue
        if normalize_name(name) in revived or normalize_name(who["name"]) in revived:
            continue
        quote = quote_for(scene.prose, name, avoid=NOT_IN_PERSON)
        if not quote:          # named only in dreams and memories, or not at all
            continue
        status, since = who["status"], who.get("status_in") or 0
        how = who.get("status_how") or status
        out.append(_finding("dead_or_absent", "critical" if status == "dead" else "major",
                            scene, quote, f"{who['name']} is {status}: {how}", since,
                            f"{who['name']} acts or speaks, {status} since scene {since}"))
    return out


def _stated_places(scene: SceneInput) -> dict[str, list[str]]:
    """Every place the extraction's `where` puts each one in (by _key), in order: two
    entries of one name are two places."""
    stated: dict[str, list[str]] = {}
    for w in scene.extraction.where:
        mine = stated.setdefault(_key(scene.memory, w["name"]), [])
        if normalize_name(w["place"]) not in map(normalize_name, mine):
            mine.append(w["place"])
    return stated


def scene_time(scene: SceneInput) -> tuple[Clock | None, Clock | None]:
    """The time the scene states (the extraction's), and it placed on the story's calendar
    (audit/clock.placed: "the next day" counted from the clock)."""
    stated = parse_clock(scene.extraction.clock) if scene.extraction.clock else None
    return stated, placed(stated, scene.clock, scene.clock_scene, scene.tick)


def minutes_since(scene: SceneInput, at: int) -> int | None:
    """The minutes between scene `at` (the one before) and this one, when the clock says:
    a time stated as minutes or hours after the scene before ("ten minutes later"), or a
    day and time when scene `at` set the clock's; else None."""
    stated, now = scene_time(scene)
    if stated is not None and stated.later is not None and stated.later.days == 0 and \
            stated.later.minutes is not None:
        return stated.later.minutes
    before = scene.clock
    if now is None or before is None or scene.clock_scene != at or None in (
            now.minutes, before.minutes):
        return None
    days = days_between(before, now)
    return None if days is None else days * 24 * 60 + (now.minutes or 0) - (before.minutes or 0)


def places(scene: SceneInput) -> list[Finding]:
    """In two places at once (within the scene, or at the moment memory has them
    elsewhere), or moved since the previous scene with no travel, in less time than a
    journey takes (TRAVEL_MINUTES, as the clock says: with no time stated, none is
    judged). Where the scene has no location (an imported one), those present are where
    the extraction's `where` puts them."""
    out, memory = [], scene.memory
    clock = scene_time(scene)[1]
    travel = {_key(memory, n) for n in scene.extraction.travel}
    stated = _stated_places(scene)
    present = _present(scene)
    seen: set[str] = set()
    for name in dict.fromkeys([*present, *(w["name"] for w in scene.extraction.where)]):
        key = _key(memory, name)
        if key in seen:
            continue
        seen.add(key)
        mine, moving = stated.get(key, []), key in travel
        here = (scene.location if name in present else "") or (mine[0] if mine else "")
        elsewhere = [p for p in mine if normalize_name(p) != normalize_name(here)]
        if here and elsewhere and not moving:
            out.append(_finding("two_places", "major", scene,
                                quote_for(scene.prose, name, thing=elsewhere[0]),
                                f"{name} is at {here}", scene.tick,
                                f"{name} is at {here} and at {elsewhere[0]} in the same scene"))
            continue
        who = person(memory, name)
        if who is None or not who.get("place") or not here or moving or name not in present:
            continue
        before, at = str(who["place"]), int(who.get("place_in") or 0)
        if normalize_name(before) == normalize_name(here) or at >= scene.tick:
            continue
        quote = quote_for(scene.prose, name, avoid=NOT_IN_PERSON)
        if not quote:
            continue
        if clock is not None and scene.clock is not None and clock.same(scene.clock) \
                and scene.clock_scene == at:
            out.append(_finding("two_places", "major", scene, quote,
                                f"{who['name']} is at {before} at {scene.clock.text or 'that time'}",
                                at, f"{who['name']} is at {here} at the moment "
                                f"scene {at} has them at {before}"))
        elif at == scene.tick - 1 and (gap := minutes_since(scene, at)) is not None and \
                0 <= gap < TRAVEL_MINUTES:
            out.append(_finding("no_travel", "minor", scene, quote,
                                f"{who['name']} is at {before}", at,
                                f"{who['name']} is at {here} {_minutes(gap)} after {before}, "
                                "with no travel"))
    return out


def _minutes(gap: int) -> str:
    return "the same minute" if gap == 0 else f"{gap} minute{'s' if gap != 1 else ''}"


def lost_item(scene: SceneInput) -> list[Finding]:
    """An object used (or given, or lost again) after it was lost or given away."""
    out = []
    regained = {(normalize_name(i.get("name", "")), item_key(i.get("item", "")))
                for i in scene.extraction.items if i.get("event") == "gains"}
    for item in scene.extraction.items:
        if item.get("event") not in ("uses", "gives", "loses") or \
                (normalize_name(item.get("name", "")), item_key(item.get("item", ""))) in regained:
            continue
        who = person(scene.memory, item.get("name", ""))
        entry = lost_entry(who, item.get("item", "")) if who is not None else None
        if who is None or entry is None or not isinstance(entry.get("in"), int) \
                or entry["in"] >= scene.tick:
            continue
        out.append(_finding("lost_item", "major", scene, _item_quote(scene.prose, item),
                            f"{who['name']} {entry.get('how', 'lost it')}: {entry.get('item')}",
                            entry["in"], f"{who['name']} {item['event'].rstrip('s')}s "
                            f"{item['item']} after parting with it in scene {entry['in']}"))
    return out


def _item_quote(prose: str, item: dict[str, str]) -> str:
    """The sentence that says what is done with the object: naming its holder and it
    (else it alone), not a memory of it nor a retelling of how it was parted with (a use;
    for giving or losing it again, only not a memory); else any that names it."""
    name, thing = (item.get("name", ""), False), (item.get("item", ""), True)
    avoid = RETOLD if item.get("event") == "uses" else NOT_IN_PERSON
    for terms, skip in (([name, thing], avoid), ([thing], avoid), ([name, thing], None),
                        ([thing], None)):
        if found := sentence_naming(prose, terms, skip):
            return found
    return ""


def nomenclature(scene: SceneInput) -> list[Finding]:
    """A character or place named by a variant of a known name, or a new person who
    repeats a known first name (nomenclature.name_clash: the rule the tick's naming
    guard keeps to). The known names are listed only when a name the scene uses is not
    one of them."""
    memory = scene.memory
    x = scene.extraction
    named = [(n, "people") for n in dict.fromkeys([scene.pov, *x.present, *x.recalled,
                                                   *x.travel, *(w["name"] for w in x.where),
                                                   *(i["name"] for i in x.items)]) if n]
    named += [(p, "places") for p in dict.fromkeys([scene.location,
                                                    *(w["place"] for w in x.where)]) if p]
    book: NameBook | None = None
    out, seen = [], set()
    for name, kind in named:
        if kind == "people" and person_problem(name):
            continue          # "Tuesday", "She": no one's name, so no one's variant
        found = find_person(memory, name) if kind == "people" else memory.find_location(name)
        known = scene.known_people if kind == "people" else scene.known_places
        if found is not None and (known is None or found.get("id") in known):
            continue
        book = book or known_book(scene)
        clash = name_clash(name, book, kind)
        if clash is None or normalize_name(name) in seen:
            continue
        seen.add(normalize_name(name))
        first = memory.find_character(clash.known) or memory.find_location(clash.known)
        quote = quote_for(scene.prose, name) if kind == "people" else \
            quote_for(scene.prose, thing=name)
        out.append(_finding("nomenclature", "minor", scene, quote or name,
                            clash.known, int((first.get("first_seen") if first else 0) or 0),
                            clash.says(name)))
    return out


def known_book(scene: SceneInput) -> NameBook:
    """The names of the characters (and their aliases) and places known before the scene."""
    chars = [c for cid, c in scene.memory.characters.items()
             if scene.known_people is None or cid in scene.known_people]
    return name_book([str(c.get("name", "")) for c in chars], _known_places(scene),
                     aliases=[str(a) for c in chars for a in c.get("aliases") or [] if a])


def _known_places(scene: SceneInput) -> list[str]:
    return [str(p.get("name", "")) for lid, p in scene.memory.locations.items()
            if scene.known_places is None or lid in scene.known_places]


def pov_knowledge(scene: SceneInput) -> list[Finding]:
    """The POV character uses a fact they never witnessed and were never told."""
    if not scene.pov:
        return []
    out = []
    memory, told = scene.memory, scene.extraction.told
    for use in scene.extraction.knows:
        who = person(memory, use.get("name", ""))
        pov = person(memory, scene.pov)
        if who is None or who is not pov:
            continue
        fact = match_fact(memory.facts, use.get("fact", ""), before=scene.tick)
        if fact is None or knows(memory, who["name"], fact):
            continue
        if any(find_person(memory, t.get("to", "")) is who and
               match_fact([fact], t.get("fact", ""), before=scene.tick) for t in told):
            continue
        quote = quote_for(scene.prose, *_key_words(use["fact"])[:2]) or use["fact"]
        out.append(_finding("pov_knowledge", "major", scene, quote, str(fact.get("text")),
                            int(fact.get("scene") or 0), f"{who['name']} knows what they "
                            f"never witnessed nor were told (scene {fact.get('scene')})"))
    return out


def _key_words(text: str) -> list[str]:
    words = [w for w in re.findall(r"[A-Za-z']+", text) if len(w) > 3]
    return sorted(words, key=lambda w: -len(w))


def clock(scene: SceneInput) -> list[Finding]:
    """The story's clock runs backwards: the scene is dated (or timed) before the scene
    that set the clock. The quote is the scene's own sentence that states the time; a
    time no sentence of the scene states is the extractor's reading, and no finding."""
    said, stated = scene_time(scene)
    if said is None or said.day is None or stated is None or scene.clock is None or \
            not stated.before(scene.clock):
        return []            # (a time relative to the scene before never runs backwards)
    quote = time_sentence(scene.prose, stated)
    if not quote:
        return []
    return [_finding("clock", "major", scene, quote, scene.clock.text or str(scene.clock.to_dict()),
                     scene.clock_scene, f"the clock runs backwards: {scene.extraction.clock} "
                     f"after {scene.clock.text}")]


def time_sentence(prose: str, stated: Clock) -> str:
    """The first sentence of `prose` that states `stated`'s day (its time as well, when
    `stated` has one and a sentence says it), or ""."""
    first = ""
    for sentence in sentences(prose):
        own = parse_clock(sentence)
        if own is None or not own.same_day(stated):
            continue
        if stated.minutes is None or own.minutes == stated.minutes:
            return sentence
        first = first or sentence
    return first


def weekday(scene: SceneInput) -> list[Finding]:
    """A weekday stated against the story's calendar: counted on from the last weekday
    stated, the scene's day is another ("Monday 14 October", then "the next day,
    Thursday"). The quote is the scene's sentence naming the weekday (a weekday no
    sentence states is the extractor's reading: no finding); the other, the sentence
    that named the last one."""
    stated, now = scene_time(scene)
    if stated is None or stated.weekday is None or now is None or now.day is None:
        return []
    counted = counted_weekday(scene.clock, now)
    quote = weekday_sentence(scene.prose, stated.weekday)
    if counted is None or counted == stated.weekday or not quote or scene.clock is None:
        return []
    days = days_between(scene.clock, now) or 0
    named = scene.clock.named
    said, by = WEEKDAYS[stated.weekday].capitalize(), WEEKDAYS[counted].capitalize()
    when = "the same day" if days == 0 else f"{abs(days)} day{'s' if abs(days) != 1 else ''} " \
        f"{'after' if days > 0 else 'before'}"
    return [_finding("weekday", "major", scene, quote,
                     named.quote or scene.clock.text if named else scene.clock.text,
                     named.scene if named else scene.clock_scene,
                     f"{said} is stated for a {by}: {when} {scene.clock.text} "
                     f"(a {WEEKDAYS[scene.clock.weekday or 0].capitalize()}, scene "
                     f"{scene.clock_scene})")]


def season(scene: SceneInput) -> list[Finding]:
    """The opposite season to the one stated last, fewer days after it than a season
    takes (audit/clock.SEASON_DAYS: snow, then harvest heat the next day), as the clock
    says (a scene with no day placed is not judged). Both quotes are the scenes' own
    sentences."""
    said = season_of(scene.prose)
    last = scene.clock.season if scene.clock is not None else None
    now = scene_time(scene)[1]
    if said is None or last is None or now is None or now.day is None:
        return []
    gap = against_season(last, said[0], now)
    if gap is None:
        return []
    when = "the same day" if gap == 0 else f"{gap} day{'s' if gap != 1 else ''} after"
    return [_finding("season", "major", scene, said[1], last.quote or last.value, last.scene,
                     f"{said[0]} {when} the {last.value} of scene {last.scene}")]


def appearance(scene: SceneInput) -> list[Finding]:
    """Someone's eye colour, hair colour, height, build or scar stated otherwise than an
    earlier scene stated it (no word of the two in common: "grey-blue" after "blue" is
    no finding, "brown" after "blue" is)."""
    out = []
    for item in scene.extraction.appearance:
        who = person(scene.memory, item.get("name", ""))
        feature, value = str(item.get("feature", "")).lower(), item.get("value", "")
        known = looks(who, feature) if who is not None else None
        if who is None or known is None or not isinstance(known.get("in"), int) \
                or known["in"] >= scene.tick:
            continue
        was = str(known["value"])
        if not words_of(value) or not words_of(was) or words_of(value) & words_of(was):
            continue
        quote = sentence_naming(scene.prose, [(item["name"], False), (value, True)]) or \
            sentence_naming(scene.prose, [(value, True)])
        out.append(_finding("appearance", "minor", scene, quote,
                            f"{who['name']}'s {feature}: {was}", known["in"],
                            f"{who['name']}'s {feature} is {value}, {was} in scene "
                            f"{known['in']}"))
    return out


def loop_overdue(scene: SceneInput) -> list[Finding]:
    """A loop untouched for `loop_overdue` ticks (said once, the tick it becomes overdue)."""
    out = []
    last_sentence = (sentences(scene.prose) or [""])[-1]
    due = scene.tick - scene.rules.loop_overdue - 1    # the last touch of a loop said now
    for loop in scene.memory.open_loops():
        if loop.get("opened_in") != due and due not in (loop.get("scenes") or ()):
            continue          # (its last touch is one of these: not this one, then)
        touched = [t for t in loop.get("scenes") or [] if isinstance(t, int) and t < scene.tick]
        opened = loop.get("opened_in")
        last = max([*touched, *([opened] if isinstance(opened, int) else [])], default=0)
        if last and scene.tick - last == scene.rules.loop_overdue + 1 and \
                scene.tick not in (loop.get("scenes") or []):
            out.append(_finding("loop_overdue", "minor", scene, last_sentence,
                                str(loop.get("description", "")), last,
                                f"the loop [{loop.get('id')}] has gone {scene.tick - last} "
                                "scenes without a mention"))
    return out


def _shingles(text: str) -> set[tuple[str, ...]]:
    words = re.findall(r"[a-z0-9']+", text.lower())
    return {tuple(words[i:i + SHINGLE]) for i in range(len(words) - SHINGLE + 1)}


def _paragraphs(body: str) -> list[str]:
    return [p.strip() for p in re.split(r"\n\s*\n", body)
            if len(p.split()) >= MIN_PARAGRAPH]


def repetition(scene: SceneInput) -> list[Finding]:
    """A paragraph whose 5-word shingles overlap one of the last K scenes' (Jaccard at or
    over the threshold); the worst match per paragraph."""
    old = [(tick, p, _shingles(p)) for tick, _, body in scene.recent for p in _paragraphs(body)]
    out = []
    for para in _paragraphs(scene.prose):
        mine = _shingles(para)
        best = max(((len(mine & s) / len(mine | s), tick, p) for tick, p, s in old if s),
                   default=(0.0, 0, ""))
        if best[0] >= scene.rules.repeat_threshold:
            out.append(_finding("repetition", "major" if best[0] >= 0.8 else "minor", scene,
                                _clip(para), _clip(best[2]), best[1],
                                f"a passage repeats scene {best[1]} ({best[0]:.0%} alike)"))
    return out


def _clip(text: str, words: int = 30) -> str:
    parts = text.split()
    return " ".join(parts[:words]) + (" …" if len(parts) > words else "")


def opening_of(body: str) -> str:
    """A scene's opening: its first OPENING words, normalized."""
    return " ".join(re.findall(r"[a-z0-9']+", body.lower())[:OPENING])


def repeated_title(scene: SceneInput) -> list[Finding]:
    """The title, or the opening, of one of the last K scenes again."""
    out = []
    title, opening = normalize_name(scene.title), opening_of(scene.prose)
    for tick, old_title, _body in reversed(scene.recent):
        if title and normalize_name(old_title) == title:
            out.append(_finding("repeated_title", "minor", scene, scene.title, old_title, tick,
                                f"the title of scene {tick} again"))
            break
    for tick, _, body in reversed(scene.recent):
        if len(opening.split()) == OPENING and opening_of(body) == opening:
            out.append(_finding("repeated_title", "minor", scene, _clip(scene.prose, OPENING),
                                _clip(body, OPENING), tick, f"the opening of scene {tick} again"))
            break
    return out


def voice(scene: SceneInput) -> list[Finding]:
    """A line of dialogue in another person's voice, or one its speaker never says
    (audit/voices.py)."""
    return voice_findings(scene.tick, scene.prose, scene.memory,
                          [scene.pov, *scene.cast, *scene.extraction.present])


RULE_CHECKS: tuple[Callable[[SceneInput], list[Finding]], ...] = (
    dead_or_absent, places, lost_item, nomenclature, pov_knowledge, clock, weekday, season,
    appearance, loop_overdue, repetition, repeated_title, voice)


def rule_kinds() -> list[str]:
    """The rule kinds, in the order findings are reported."""
    return list(RULES)


