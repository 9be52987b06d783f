"""The prompt logs' housekeeping: stripping the messages off a log cuts the file."""

from __future__ import annotations

import json

from novel_agent.story.project.journal import Cut
from novel_agent.tick.prompt_log import (
    LEFT_OUT_KEPT,
    expired_logs,
    log_path,
    log_text,
    stripped,
    stripped_logs,
)

REPORT = {"stage": "writer", "budget": 7000, "tokens": 3100, "note": "Mara’s “map”",
          "items": [{"key": f"fact_{n}", "included": n % 3 == 0} for n in range(200)]}
MESSAGES = [{"role": "system", "content": 'line one\n "messages": not a key'},
            {"role": "user", "content": "Écris la scène."}]


def land(project, logs):
    txn = project.transaction()
    for path, text in logs.items():
        if isinstance(text, Cut):
            txn.cut(path, text)
        else:
            txn.stage(path, text)
    txn.commit()


def test_a_log_loses_its_messages_by_a_cut_and_reads_as_its_report_written_again(project):
    path = log_path(project, 3, "writer")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(log_text(REPORT, MESSAGES), encoding="utf-8")
    logs = stripped_logs(project, 3)
    assert isinstance(logs[path], Cut) and logs[path].text == "\n}\n"   # nothing rewritten
    land(project, logs)
    expected = json.dumps(stripped(json.loads(log_text(REPORT, MESSAGES))), indent=1,
                          ensure_ascii=False) + "\n"
    assert path.read_text(encoding="utf-8") == expected
    report = json.loads(expected)
    assert "messages" not in report
    assert sum(not i["included"] for i in report["items"]) == LEFT_OUT_KEPT


def test_a_log_written_otherwise_is_stripped_by_writing_its_report_again(project):
    path = log_path(project, 4, "planner")
    path.parent.mkdir(parents=True, exist_ok=True)
    other = {"messages": MESSAGES, **REPORT}               # the messages first, items uncapped
    path.write_text(json.dumps(other, indent=1), encoding="utf-8")
    (written,) = stripped_logs(project, 4).values()
    assert isinstance(written, str)
    assert json.loads(written) == stripped(other) and "messages" not in json.loads(written)


def test_stripping_looks_at_its_own_tick_and_removal_at_every_tick_up_to_it(project):
    for tick, stage in ((5, "writer"), (5, "summarizer_checkpoint_010"), (50, "writer"),
                        (500, "writer")):
        path = log_path(project, tick, stage)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(log_text(REPORT, MESSAGES), encoding="utf-8")
    assert sorted(p.name for p in expired_logs(project, 5)) == [
        "tick_005_summarizer_checkpoint_010.json", "tick_005_writer.json"]
    assert [p.name for p in stripped_logs(project, 50)] == ["tick_050_writer.json"]
    assert expired_logs(project, 0) == {} and stripped_logs(project, 7) == {}
    (project.log_dir / "daemon.log").write_text("a line\n", encoding="utf-8")
    assert sorted(p.name for p in expired_logs(project, 499)) == [    # not the daemon's log
        "tick_005_summarizer_checkpoint_010.json", "tick_005_writer.json", "tick_050_writer.json"]


def test_the_logs_are_tidied_at_checkpoints_the_ticks_fallen_behind_since_the_last(project):
    from novel_agent.tick.prompt_log import tidied_logs
    for tick in range(1, 31):
        path = log_path(project, tick, "writer")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(log_text(REPORT, MESSAGES), encoding="utf-8")

    def tidied(tick):
        out = tidied_logs(project, tick, keep=5, kept_at_all=12, every=4)
        return ({int(p.name[5:8]) for p, v in out.items() if v is None},
                {int(p.name[5:8]) for p, v in out.items() if v is not None})

    assert tidied(27) == (set(), set())          # between checkpoints: nothing
    assert tidied(28) == (set(range(1, 17)), {20, 21, 22, 23})   # 1-12: as if left behind
    assert tidied(4) == (set(), set())           # nothing has fallen behind yet
    assert tidied(8) == (set(), {1, 2, 3})
    assert tidied_logs(project, 28, keep=5, kept_at_all=12, every=1).keys() == {
        *(log_path(project, t, "writer") for t in range(1, 17)),
        log_path(project, 23, "writer")}   # every tick
    # a log due to be stripped and removed at once is removed (else the folder grows
    # without bound when prompt_log_ticks is keep_prompt_logs)
    both = tidied_logs(project, 28, keep=5, kept_at_all=5, every=4)
    assert both and set(both.values()) == {None}
    both = tidied_logs(project, 28, keep=5, kept_at_all=8, every=4)       # 20 of each
    assert both[log_path(project, 20, "writer")] is None


def test_an_interval_lowered_mid_book_leaves_no_log_past_prompt_log_ticks(project):
    """checkpoint_summary_interval 10 up to tick 305, then 3: the checkpoints at 306, 309
    come; the logs of 281-283 (fallen behind between 300 and 306) go with the rest."""
    from novel_agent.tick.prompt_log import tidied_logs
    for tick in range(1, 311):
        path = log_path(project, tick, "writer")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(log_text(REPORT, MESSAGES), encoding="utf-8")
        every = 10 if tick <= 305 else 3
        for done, what in tidied_logs(project, tick, keep=5, kept_at_all=20,
                                      every=every).items():
            if what is None:
                done.unlink()
    left = sorted(int(p.name[5:8]) for p in project.log_dir.iterdir())
    assert left == list(range(290, 311))
