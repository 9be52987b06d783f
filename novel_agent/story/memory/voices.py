"""Voice cards: how a character speaks, kept in the character's memory file.

A card is the `voice` mapping of `memory/characters/<id>.yaml`:

    voice:
      by: author                 # who wrote it: author (kept as written) or extractor
      diction: clipped, nautical words; no contractions
      habits: short sentences; answers a question with a question
      tics: [mark me, aye]       # words or phrases they use again and again
      never: [okay, sorry]       # what they never say

A card without `by: extractor` is the author's: no tick changes it. The extractor
proposes a card for a character present who speaks and has none, written with
`by: extractor`; it fills in a thin card of its own (one with fewer than THIN of the
four fields), never one field it already has. An author who edits a proposed card
and wants it kept as it is sets `by: author` (or removes the line).

`check_voice` (story/memory/records.py, beside the card's declaration) says what is
wrong with a hand-edited card, reported as a one-line error naming the file and the
key; `card_lines` is how the writer is shown a card; `wanting` names who the extractor
is asked a card of: the people of the scene who say a line in it (text/speakers.py)
and want one. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

from novel_agent.story.memory.records import (
    EXTRACTOR,
    VOICE_FIELDS,
    VOICE_LISTS,
    VOICE_TEXTS,
    Character,
    VoiceCard,
    check_voice,
)
from novel_agent.text.speakers import speakers

THIN = 2             # a card with fewer fields than this is filled in by the extractor
MOST = 4             # words or phrases a list keeps
TEXT_CHARS = 100     # a proposed line's longest
PHRASE_CHARS = 30    # a proposed tic's longest


def card(character: Character) -> VoiceCard:
    """A character's voice card: its fields that say something (empty: no card)."""
    voice = character.get("voice")
    if not isinstance(voice, Mapping) or check_voice(voice) is not None:
        return {}
    out: VoiceCard = {}
    for key in VOICE_TEXTS:
        text = " ".join(str(voice.get(key) or "").split())
        if text:
            out[key] = text
    for listed in VOICE_LISTS:
        items = [" ".join(x.split()) for x in voice.get(listed) or [] if x and x.strip()]
        if items:
            out[listed] = items
    return out


def authored(character: Character) -> bool:
    """Whether the character's card is the author's (a card without `by: extractor`)."""
    voice = character.get("voice")
    return isinstance(voice, Mapping) and bool(card(character)) and voice.get("by") != EXTRACTOR


def wants_card(character: Character) -> bool:
    """Whether the extractor may propose (or fill in) the character's card: none yet, or
    a thin one of its own."""
    return not authored(character) and len(card(character)) < THIN


# A proposed tic or never-said that tells of the speech instead of being words of it
# ("Always uses precise language", "Stranger often uses the phrase"): a small model's
# habit, left out of the card.
DESCRIBES = re.compile(r"\b(?:uses?|using|says?|saying|speaks?|speaking|phrases?|language|"
                       r"words?|often|always|tends?|vocabulary|accent|tone|manner)\b", re.I)
QUOTES = "\"'“”‘’"


def spoken(item: str) -> str:
    """A proposed tic or never-said as the words said (their quotes off, cut to
    PHRASE_CHARS), or "" when it describes the speech instead: a quoted item is words
    said whatever they are."""
    text = " ".join(item.split())
    quoted = len(text) > 2 and text[0] in QUOTES and text[-1] in QUOTES
    text = text.strip(QUOTES).strip()
    if not text or (not quoted and DESCRIBES.search(text)):
        return ""
    return text[:PHRASE_CHARS]


def proposed(answer: Mapping[str, Any]) -> VoiceCard:
    """A card as the extractor proposes it (its answer's fields, cut to their sizes)."""
    out: VoiceCard = {}
    for key in VOICE_TEXTS:
        text = " ".join(str(answer.get(key) or "").split())[:TEXT_CHARS]
        if text:
            out[key] = text
    for listed in VOICE_LISTS:
        raw = answer.get(listed)
        items = raw if isinstance(raw, list) else [raw] if isinstance(raw, str) else []
        kept = [said for said in (spoken(str(x or "")) for x in items) if said]
        if kept:
            out[listed] = list(dict.fromkeys(kept))[:MOST]
    return out


def take_proposal(character: Character, answer: Mapping[str, Any]) -> list[str]:
    """Give `character` the card the extractor proposes (in place), as far as it may: a
    new card, or the fields a thin card of the extractor's lacks; never a field it has,
    never the author's card. Returns the fields added."""
    if not wants_card(character):
        return []
    have, offered = card(character), proposed(answer)
    added = [key for key in VOICE_FIELDS if key in offered and key not in have]
    if not added:
        return []
    voice: dict[str, Any] = {"by": EXTRACTOR, **have, **{key: offered[key] for key in added}}
    character["voice"] = cast(VoiceCard, {key: voice[key] for key in ("by", *VOICE_FIELDS)
                                          if key in voice})
    return list(added)


def card_lines(name: str, voice: VoiceCard) -> str:
    """A card as the writer is shown it: a line of how they speak, a line of what they say
    and never say (each only when the card says it)."""
    how = "; ".join(voice[key] for key in VOICE_TEXTS if voice.get(key))
    words = _words_line(voice)
    return f"{name}: {how}\n  {words}" if how and words else f"{name}: {how or words}"


def card_line(name: str, voice: VoiceCard) -> str:
    """A card in one short line: what they say and never say (else how they speak)."""
    words = _words_line(voice)
    return f"{name}: {words}" if words else f"{name}: {voice.get('diction') or voice.get('habits')}"


def _words_line(voice: VoiceCard) -> str:
    said = ", ".join(f'"{t}"' for t in voice.get("tics") or [])
    never = ", ".join(f'"{t}"' for t in voice.get("never") or [])
    return "; ".join(part for part in (f"says {said}" if said else "",
                                       f"never says {never}" if never else "") if part)


def people_forms(characters: Iterable[Character]) -> dict[str, list[str]]:
    """The names each character goes by (its name and aliases), by id: for
    text.speakers."""
    return {str(c.get("id")): [str(c.get("name") or ""), *map(str, c.get("aliases") or [])]
            for c in characters}


def wanting(people: Sequence[Character], prose: str, most: int) -> list[str]:
    """The names of up to `most` of `people` (the scene's, memory's files) who say a line of
    `prose` and want a card (`wants_card`), in the order they first speak."""
    by_id = {str(c.get("id")): c for c in people}
    said = speakers(prose, people_forms(by_id.values()))
    return [str(by_id[key].get("name")) for key in said if wants_card(by_id[key])][:most]
