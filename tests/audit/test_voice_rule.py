"""The voice rule: a line of dialogue that uses another person's tic and none of the
speaker's own, or says what the speaker never says, is a minor style finding."""

from __future__ import annotations

from novel_agent.audit.rules import SceneInput, check
from novel_agent.story.decisions import Extraction
from novel_agent.story.memory.store import Memory, upsert_character


def memory() -> Memory:
    m = Memory()
    for name in ("Mara Quill", "Tobin Keel", "Ilse Varga"):
        upsert_character(m, name, tick=1)
    m.characters["mara_quill"]["voice"] = {"tics": ["mark me", "aye"], "never": ["okay"]}
    m.characters["tobin_keel"]["voice"] = {"by": "extractor", "tics": ["right then"]}
    m.characters["ilse_varga"]["voice"] = {"tics": ["my dear"]}
    return m


def scene(prose: str, cast=("Mara Quill", "Tobin Keel")) -> SceneInput:
    return SceneInput(tick=7, prose=prose, extraction=Extraction(summary=["x"]), memory=memory(),
                      pov="Mara Quill", location="the quay", cast=list(cast))


def voice(prose: str, **kw):
    return [f for f in check(scene(prose, **kw)) if f.kind == "voice"]


def test_a_line_in_anothers_voice_is_found_with_the_card_it_sounds_like():
    found = voice('Tobin Keel spat. "Aye, mark me, the tide is ours."')
    assert len(found) == 1
    f = found[0]
    assert (f.subtype, f.severity, f.scene) == ("style", "minor", 7)
    assert f.quote == "Aye, mark me, the tide is ours."
    assert f.against == "Mara Quill's voice card: says \"mark me\", \"aye\""
    assert f.message == "Tobin Keel says \"aye\", Mara Quill's tic, and none of their own"


def test_a_line_that_also_has_the_speakers_own_tic_or_no_one_elses_is_no_finding():
    assert voice('"Right then, aye," said Tobin.') == []          # his own as well
    assert voice('"The tide is ours," said Tobin.') == []          # no one's
    assert voice('"Marking me, were you? Ayes!" Mara said.') == []   # her own, inflected
    assert voice('"Aye," she said.') == []                         # no speaker known
    # Ilse is not in the scene: the card of someone absent is not compared
    assert voice('"My dear, the tide," said Tobin.') == []
    assert len(voice('"My dear, the tide," said Tobin.', cast=("Tobin Keel", "Ilse Varga"))) == 1


def test_the_speaker_saying_what_their_card_says_they_never_say_is_found():
    found = voice('Mara Quill shook her head. "Okay, aye, we go."')
    assert [f.message for f in found] == ["Mara Quill says \"okay\", which their voice card "
                                          "says they never say"]
    assert found[0].against == "Mara Quill's voice card: never says \"okay\""
