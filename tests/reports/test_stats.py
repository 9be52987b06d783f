"""`novel stats`: numbers per tick from the scenes, prompt logs and ledger; --plot charts."""

from __future__ import annotations

import json
import struct
import sys
import xml.etree.ElementTree as ET

import pytest

from novel_agent.files import read_front_matter
from novel_agent.reports.usage import project_rows
from novel_agent.tick.prompt_log import log_path
from tests.support.clirunner import invoke
from tests.support.projects import set_llm
from tests.support.repo import DOCS, block, page
from tests.support.ticking import run_ticks


@pytest.fixture
def story(project):
    """Twelve offline ticks, a checkpoint every five."""
    set_llm(project.root, generation__checkpoint_summary_interval=5)
    run_ticks(project, 12)
    return project


def stats_json(*extra) -> dict:
    result = invoke("stats", "-p", "harbour", "--json", *extra)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_every_tick_has_its_numbers_from_the_files_and_logs(story):
    stats = stats_json()
    ticks = stats["ticks"]
    assert [t["tick"] for t in ticks] == list(range(1, 13))
    for t in ticks:
        meta, body = read_front_matter(story.scene_path(t["tick"]))
        assert t["words"] == meta["words"] == len(body.split())
        writer = json.loads(log_path(story, t['tick'], "writer").read_text())
        billed = sum(r["prompt_tokens"] for r in project_rows(story)
                     if r["tick"] == t["tick"] and r["stage"] == "writer")
        assert t["prompt"]["writer"] == billed       # as `novel usage` counts it
        assert t["sections"] == {s["name"]: s["tokens"] for s in writer["sections"]}
        assert (t["budget"], t["compaction"], t["prefix_share"]) == (
            writer["budget"], writer["compaction_level"], writer["prefix_share"])
        assert t["cost"] == 0.0                                   # offline
    with_summaries = [t["tick"] for t in ticks if "summarizer" in t["prompt"]]
    assert with_summaries == [5, 10]
    checkpoint = sum(r["prompt_tokens"] for r in project_rows(story)
                     if r["tick"] == 5 and r["stage"].startswith("summarizer"))
    assert ticks[4]["prompt"]["summarizer"] == checkpoint > 0   # the ledger's, as usage
    summary = stats["summary"]
    assert summary["scenes"] == 12
    assert summary["words"] == sum(t["words"] for t in ticks)
    assert summary["compaction_levels"] == {"0": 12}
    assert [level["label"] for level in stats["summaries"]] == ["checkpoints", "overall"]
    assert stats["summaries"][0]["docs"] == 2 and stats["summaries"][0]["compression"] > 1


def test_the_text_report_says_each_measure(story):
    result = invoke("stats", "-p", "harbour")
    lines = result.output.splitlines()
    words = stats_json()["summary"]["words"]
    assert lines[0] == f"stats of harbour: 12 scenes, {words:,} words"
    heads = [line[:17].strip() for line in lines[1:]]
    assert heads == ["words per scene", "planner prompt", "writer prompt", "extractor prompt",
                     "summarizer calls", "writer sections", "compaction", "prefix shared",
                     "recall", "slop", "repeated n-grams", "MTLD", "sentence length",
                     "dialogue share", "degradation", "chapter", "chapter", "chapter",
                     "summaries", "summaries", "cost per tick"]
    assert lines[-1] == "cost per tick     mean $0, last $0, total $0"
    assert "compaction        level 0: 12 ticks" in lines


def test_the_recall_probe_per_tick_and_over_the_run(story):
    stats = stats_json()
    shares = []
    for t in stats["ticks"]:
        log = log_path(story, t['tick'], "writer")
        probe = json.loads(log.read_text())["recall"]            # the writer's report
        assert t["recall"] == {"relevant": probe["relevant"], "reached": probe["reached"],
                               "share": probe["share"]}
        if probe["relevant"]:
            shares.append(probe["reached"] / probe["relevant"])
    assert len(shares) >= 8                               # ticks with facts known
    recall = stats["summary"]["recall"]
    assert recall["ticks"] == len(shares)
    assert recall["mean"] == round(sum(shares) / len(shares), 4)
    assert (recall["min"], recall["last"]) == (round(min(shares), 4), round(shares[-1], 4))
    lines = invoke("stats", "-p", "harbour").output.splitlines()
    assert f"recall            mean {recall['mean']:.0%}, min {recall['min']:.0%}, last " \
           f"{recall['last']:.0%} of the relevant facts reached the writer ({len(shares)} " \
           "ticks had one)" in lines


def test_the_recall_probe_of_ticks_without_a_log_comes_from_state_yaml(story):
    before = {t["tick"]: t["recall"] for t in stats_json()["ticks"]}
    for path in story.log_dir.glob("tick_01[12]_writer.json"):
        path.unlink()
    after = {t["tick"]: t["recall"] for t in stats_json()["ticks"]}
    assert after == before                     # state.yaml keeps the last 20 ticks' rows
    state = story.state()
    assert [row[0] for row in state["recall"]][-2:] == [11, 12]
    story.update_state(recall=None)
    after = {t["tick"]: t["recall"] for t in stats_json()["ticks"]}
    assert after[11] is after[12] is None and after[10] == before[10]


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


@pytest.mark.parametrize("name", ["stats.png", "stats.svg"])
def test_plot_writes_a_valid_png_and_svg(story, tmp_path, name):
    pytest.importorskip("matplotlib", reason="the plot extra is not installed: "
                                             "pip install 'novel_agent[plot]'")
    out = tmp_path / "charts" / name
    result = invoke("stats", "-p", "harbour", "--plot", str(out))
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1] == f"wrote {out}"
    if name.endswith(".png"):
        assert png_size(out.read_bytes()) == (1200, 1125)         # three rows: the prose's last
        assert out.stat().st_size > 20_000                        # charts, not a blank page
    else:
        root = ET.fromstring(out.read_bytes())
        assert root.tag == "{http://www.w3.org/2000/svg}svg"
        assert "writer prompt tokens per tick, by section" in out.read_text()
        assert "recall probe: of the facts relevant to" in out.read_text()


def test_plot_without_matplotlib_says_how_to_install_it(story, tmp_path, monkeypatch):
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)          # import fails
    result = invoke("stats", "-p", "harbour", "--plot",
                    str(tmp_path / "s.png"))
    assert result.exit_code == 1
    assert result.output.splitlines()[-1] == (
        "Error: --plot needs matplotlib, an optional extra: pip install 'novel_agent[plot]'")
    assert not (tmp_path / "s.png").exists()


def test_plot_wants_png_or_svg(story, tmp_path):
    result = invoke("stats", "-p", "harbour", "--plot",
                    str(tmp_path / "s.pdf"))
    assert result.exit_code == 2 and "give a .png or .svg file" in result.output


def test_stats_of_a_new_project(project):
    result = invoke("stats", "-p", "harbour")
    assert result.output.splitlines() == ["stats of harbour: 0 scenes, 0 words",
                                          "words per scene   none yet"]


def test_the_docs_show_the_report_and_a_real_plot(story):
    shown = block("guides/costs.md", "stats of harbour: 12 scenes").splitlines()
    printed = invoke("stats", "-p", "harbour").output.splitlines()
    # the same measures in the same order (the numbers move with the context engine)
    assert [line[:17] for line in shown] == [line[:17] for line in printed]
    assert shown[0].startswith("stats of harbour: 12 scenes, ")
    image = DOCS / "stats.png"
    assert "![novel stats --plot: 60 offline ticks](../stats.png)" in page("guides/costs.md")
    assert png_size(image.read_bytes()) == (1200, 1125)
