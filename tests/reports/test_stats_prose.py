"""`novel stats`' prose numbers: per scene and per chapter, in --json, the text report and
the chart; the distance from style.yaml and its own phrases; degradation; kept in the
index so that a book is measured once."""

from __future__ import annotations

import json

import pytest

import novel_agent.reports.prose as prose_module
from novel_agent.files import atomic_write
from novel_agent.reports.prose import ECHO_SCENES, prose_report
from novel_agent.story.scenes import Scene
from novel_agent.text.prose import fingerprint, ngrams, repeats_across
from tests.support.clirunner import invoke

FILLER = "The cat sat on the mat. "                       # six words, nothing to find
SLOPPY = (FILLER * 32 + "There was a sense of unease in the room. " + FILLER * 32
          + "She was determined to uncover the truth. " + FILLER * 32
          + "It was a testament to his craft, truly.")     # 600 words, three stock phrases
PAST = ("Mara walked down to the harbour. She looked at the boats and counted them. "
        "The wind turned and she pulled her coat close. ") * 4
PAST = PAST.strip()
PRESENT = ("Mara walks down to the harbour. She looks at the boats and counts them. "
           "The wind turns and she pulls her coat close. ") * 4
PRESENT = PRESENT.strip()


def write(project, *bodies: str) -> None:
    for tick, body in enumerate(bodies, 1):
        atomic_write(project.scene_path(tick), Scene(tick=tick, body=body,
                                                     title=f"Scene {tick}").render())


def stats_json() -> dict:
    return json.loads(invoke("stats", "-p", "harbour", "--json", ok=True).stdout)


def test_each_scene_has_its_prose_numbers_counted_by_hand(project):
    write(project, SLOPPY, FILLER * 10 + "The old harbour bell rang twice at noon.", PAST)
    ticks = stats_json()["ticks"]
    first, second, third = (t["prose"] for t in ticks)
    assert first["words"] == 600 and first["slop"] == 3 and first["slop_per_1000"] == 5.0
    assert first["echoes_per_1000"] is None                    # no scene before it
    # each of scene 2's ten "The cat sat on the mat." has 9 n-grams (four 3-grams, three
    # 4-grams, two 5-grams) that scene 1 has: 90 in its 68 words
    assert second["echoes_per_1000"] == round(90 * 1000 / 68, 2) == 1323.53
    fp = fingerprint(PAST)
    assert (third["mtld"], third["sentence_mean"], third["sentence_sd"],
            third["dialogue_share"]) == (fp.mtld, fp.sentence_mean, fp.sentence_sd, 0.0)
    assert third["distance"] is None and third["farthest"] is None     # no style.yaml


def test_dialogue_share_of_a_scene(project):
    write(project, '“Run now,” she said. He ran. "Go," he said.')
    assert stats_json()["ticks"][0]["prose"]["dialogue_share"] == 0.3333


def test_the_distance_from_style_yaml_names_the_wrong_tense(project):
    write(project, PAST, PRESENT)
    (project.root / "style.yaml").write_text(fingerprint(PAST).to_dict().__repr__()
                                             .replace("'", '"'))      # JSON is YAML
    past, present = (t["prose"] for t in stats_json()["ticks"])
    assert past["distance"] == 0.0 and past["farthest"] is None
    assert present["distance"] > 0.1 and present["farthest"] == "tense"
    lines = invoke("stats", "-p", "harbour", ok=True).output.splitlines()
    assert f"style distance    mean {(past['distance'] + present['distance']) / 2:.2f}, last " \
           f"{present['distance']:.2f} (farthest: tense)" in lines


def test_style_avoid_adds_the_projects_own_phrases(project):
    write(project, "The lamp burned low. " * 10)
    assert stats_json()["ticks"][0]["prose"]["slop"] == 0
    (project.root / "style.yaml").write_text("avoid:\n  - the lamp * low\n")
    numbers = stats_json()
    assert numbers["ticks"][0]["prose"]["slop"] == 10
    assert numbers["ticks"][0]["prose"]["slop_per_1000"] == 250.0
    assert numbers["summary"]["prose"]["overused"] == [["the lamp * low", 10]]
    assert numbers["ticks"][0]["prose"]["distance"] is None       # no fingerprint keys


def test_a_broken_style_yaml_is_an_error_naming_it(project):
    write(project, PAST)
    (project.root / "style.yaml").write_text("avoid: a testament to\n")
    result = invoke("stats", "-p", "harbour", ok=False)
    assert result.output.splitlines()[-1] == (
        f"Error: {project.root / 'style.yaml'}:1: 'avoid' must be a list of text, like "
        "[harbour, lamp]: fix the value or remove the line")


def test_degradation_is_the_last_quarter_against_the_first(project):
    clean = (FILLER * 100).strip()
    write(project, clean, clean, clean, clean, clean, clean, SLOPPY, SLOPPY)
    prose = stats_json()["summary"]["prose"]
    assert prose["slop_per_1000"]["degradation"] == {"first": 0.0, "last": 5.0,
                                                     "change": 5.0, "scenes": 2}
    assert prose["slop_per_1000"]["mean"] == 1.25 and prose["slop_per_1000"]["last"] == 5.0
    line = next(l for l in invoke("stats", "-p", "harbour", ok=True).output.splitlines()
                if l.startswith("degradation"))
    assert line.startswith("degradation       last quarter of the scenes against the first: "
                           "slop 0.0 → 5.0, n-grams ")


def test_chapters_are_measured_over_their_text(project):
    write(project, SLOPPY, PAST, PRESENT)
    stats = stats_json()
    [chapter] = stats["chapters"]                  # no outline, no checkpoint: one chapter
    whole = fingerprint("\n\n".join([SLOPPY, PAST, PRESENT]))
    assert (chapter["first"], chapter["last"], chapter["words"], chapter["slop"]) == (
        1, 3, whole.words, 3)
    assert chapter["repeats_per_1000"] == whole.repeats_per_1000
    assert chapter["mtld"] == whole.mtld
    lines = invoke("stats", "-p", "harbour", ok=True).output.splitlines()
    assert (f"chapter           Chapter 1 (scenes 1–3): slop {whole.slop_per_1000:.1f}, n-grams "
            f"{whole.repeats_per_1000:.1f}, MTLD {whole.mtld:.0f}, spread "
            f"{whole.sentence_sd:.1f}, dialogue 0%") in lines


def test_the_text_report_of_a_small_book(project):
    write(project, SLOPPY, SLOPPY)
    lines = invoke("stats", "-p", "harbour", ok=True).output.splitlines()
    fp = fingerprint(SLOPPY)
    echoes = repeats_across(ngrams(SLOPPY), [ngrams(SLOPPY)]) * 1000 / 600
    start = lines.index(next(l for l in lines if l.startswith("slop")))
    both = fingerprint(SLOPPY + "\n\n" + SLOPPY)
    assert lines[start:start + 6] == [
        'slop              mean 5.0 per 1,000 words, last 5.0; most used: "a sense of unease" '
        '×2, "determined to uncover the truth" ×2, "a testament to" ×2',
        f"repeated n-grams  3- to 5-grams per 1,000 words: within a scene mean "
        f"{fp.repeats_per_1000:.1f}, from the last {ECHO_SCENES} scenes mean {echoes:.1f}",
        f"MTLD              mean {fp.mtld:.0f}, last {fp.mtld:.0f} (lexical diversity)",
        f"sentence length   mean {fp.sentence_mean:.1f} words, spread {fp.sentence_sd:.1f} "
        f"(standard deviation), last spread {fp.sentence_sd:.1f}",
        "dialogue share    mean 0%, last 0%",
        "chapter           Chapter 1 (scenes 1–2): slop 5.0, n-grams "
        f"{both.repeats_per_1000:.1f}, MTLD {both.mtld:.0f}, spread {fp.sentence_sd:.1f}, "
        "dialogue 0%"]
    assert not any(l.startswith(("style distance", "degradation")) for l in lines)


def test_the_numbers_are_kept_and_made_again_only_for_what_changed(project, monkeypatch):
    write(project, SLOPPY, PAST, PRESENT)
    before = prose_report(project)
    measured = []

    def counting(text, *args, **kwargs):
        measured.append(text)
        return fingerprint(text, *args, **kwargs)

    monkeypatch.setattr(prose_module, "fingerprint", counting)
    again = prose_report(project)
    assert measured == [] and again.scenes == before.scenes and again.chapters == before.chapters
    write(project, SLOPPY, PAST, PAST)                 # scene 3 edited
    prose_report(project)
    assert measured == [PAST, "\n\n".join([SLOPPY, PAST, PAST])]    # it, and its chapter
    measured.clear()
    (project.root / "style.yaml").write_text("avoid: [the cat sat]\n")   # a new phrase list
    assert prose_report(project).scenes[1].slop == 3 + 96
    assert len(measured) == 4


def test_the_chart_has_the_prose_row(project, tmp_path):
    pytest.importorskip("matplotlib", reason="the plot extra is not installed: "
                                             "pip install 'novel_agent[plot]'")
    write(project, SLOPPY, PAST)
    out = tmp_path / "stats.svg"
    invoke("stats", "-p", "harbour", "--plot", str(out), ok=True)
    drawn = out.read_text()
    for title in ("slop and repeated n-grams per 1,000 words, per scene",
                  "lexical diversity and sentence-length spread, per scene",
                  "dialogue share, per scene"):
        assert title in drawn
