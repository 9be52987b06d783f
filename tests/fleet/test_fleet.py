"""`novel fleet` in process: offline books to their bounds, the view and status, a busy
book left alone, premises files; through the test server: the request limit holds, a
429 storm slows the fleet once, a book whose requests all fail is parked, ceilings."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import pytest

from novel_agent.fleet.premises import read_premises
from novel_agent.fleet.scheduler import Fleet, FleetOptions, fleet_projects
from novel_agent.fleet.view import read_state
from novel_agent.models.local import default_gguf_path
from novel_agent.story.project.folder import Project, create_project
from novel_agent.story.scenes import scene_ticks
from tests.support.batching import Batching
from tests.support.fake_anthropic import API_KEY as ANTHROPIC_KEY
from tests.support.fake_anthropic import FakeAnthropicServer, openai_body
from tests.support.fake_openai import API_KEY, FakeOpenAIServer
from tests.support.processes import until
from tests.support.responders import story_responder


def offline_books(folder, n: int) -> list[Project]:
    return [create_project(folder / f"book-{i:02d}", {
        "name": f"book-{i:02d}", "premise": f"Book {i}: a keeper finds a map.",
        "preset": "balanced"}, config={"llm": {"provider": "offline", "seed": i}})
        for i in range(1, n + 1)]


def test_a_fleet_brings_every_book_to_its_ticks_and_shows_the_view(projects_dir, cli):
    books = offline_books(projects_dir, 4)
    create_project(projects_dir / "book-02" / "x", {"name": "x", "premise": "p"})  # not a book
    run = cli("fleet", "run", "--ticks", "3", "--concurrency", "2")
    for book in books:
        assert scene_ticks(book.scenes_dir) == [1, 2, 3]
        assert f"{book.name}: tick 3 " in run.output
    lines = run.output.splitlines()
    assert lines[-5].startswith("book-01  tick    3 +3 ") and "done      has 3 ticks" in lines[-5]
    assert lines[-1].startswith("fleet  4 books (4 done): 12 ticks, ")
    again = cli("fleet", "run", "--ticks", "3")              # already there: nothing to do
    assert "0 ticks" in again.output.splitlines()[-1]
    assert all(scene_ticks(b.scenes_dir) == [1, 2, 3] for b in books)
    status = cli("fleet", "status")
    assert status.output.startswith("fleet not running: the last run finished at ")
    assert "book-04  tick    3 " in status.output


def test_words_bounds_another_folder_and_the_quiet_view(projects_dir, tmp_path, cli):
    shelf = tmp_path / "shelf"
    books = offline_books(shelf, 2)
    run = cli("fleet", "run", "--all", str(shelf), "--until-words", "500", "-q")
    assert "tick 1 " not in run.output and run.output.splitlines()[-1].startswith("fleet  2 books")
    state = read_state(shelf)
    for book, row in zip(books, state.books):
        assert row.words >= 500 and row.state == "done" and row.reason == f"has {row.words:,} words"
        last = scene_ticks(book.scenes_dir)[-1]
        assert row.tick == last and row.words - row.words_run == 0
    status = cli("fleet", "status", "--dir", str(shelf))
    assert status.output.startswith("fleet not running: the last run finished at ")
    elsewhere = cli("fleet", "status")
    assert elsewhere.output == (f"no fleet has run from {projects_dir} (start one with "
                                f"`novel fleet run --all {projects_dir}`)\n")
    stop = cli("fleet", "stop", "--dir", str(shelf), ok=False)
    assert stop.exit_code == 1 and f"no fleet is running from {shelf}" in stop.output


def test_the_view_shows_tokens_per_second_and_an_eta_that_reaches_zero(projects_dir):
    from novel_agent.fleet.view import totals_line

    books = offline_books(projects_dir, 2)
    ticks = iter(range(10**6))
    seen: list[str] = []
    fleet = Fleet(books, FleetOptions(ticks=3), {}, folder=projects_dir,
                  on_view=lambda state: seen.append(totals_line(state)),
                  clock=lambda: float(next(ticks)))      # each look at the clock: 1 s later
    fleet.run()
    etas = [line.rsplit("ETA ", 1)[1] for line in seen if "ETA " in line]
    assert any(eta not in ("0s", "?") for eta in etas[:-1]) and etas[-1] == "0s"
    assert fleet.state.tokens_per_second() > 0 and fleet.state.ticks == 6
    assert " 6 ticks, " in seen[-1] and "tokens/s" in seen[-1]


def test_a_book_another_process_holds_is_left_alone(projects_dir, cli):
    books = offline_books(projects_dir, 3)
    books[1].acquire_lock()
    try:
        run = cli("fleet", "run", "--ticks", "2")
    finally:
        books[1].release_lock()
    assert scene_ticks(books[1].scenes_dir) == []
    assert scene_ticks(books[0].scenes_dir) == scene_ticks(books[2].scenes_dir) == [1, 2]
    assert "book-02: busy: project 'book-02' is busy: process " in run.output
    state = read_state(projects_dir)
    assert [b.state for b in state.books] == ["done", "busy", "done"]


def test_a_book_that_cannot_open_is_parked_and_the_run_exits_3(projects_dir, cli):
    books = offline_books(projects_dir, 2)
    books[0].project_file.write_text("name: book-01\npremise: p\nllm: [not, a, mapping]\n")
    run = cli("fleet", "run", "--ticks", "1", ok=False)
    assert run.exit_code == 3
    assert f"book-01: parked: could not open: {books[0].project_file}:" in run.output
    assert scene_ticks(books[1].scenes_dir) == [1] and scene_ticks(books[0].scenes_dir) == []


def test_one_fleet_per_folder_and_fleet_stop_signals_it(projects_dir, cli):
    from novel_agent.daemon.heartbeat import is_novel_process
    from novel_agent.fleet.view import FleetState, write_state

    books = offline_books(projects_dir, 1)
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "novel",
                              "fleet", "run"])        # what /proc shows of a running fleet
    try:
        until(lambda: is_novel_process(other.pid), what="the process to exec")
        write_state(projects_dir, FleetState(pid=other.pid, started="2026-01-01T00:00:00",
                                             concurrency=4))
        second = cli("fleet", "run", "--ticks", "1", ok=False)
        assert second.exit_code == 1 and second.output == (
            f"Error: a fleet (pid {other.pid}) is already running from {projects_dir}; stop "
            "it with `novel fleet stop`\n")
        assert scene_ticks(books[0].scenes_dir) == []
        assert cli("fleet", "status").output.startswith(f"fleet running (pid {other.pid}) ")
        stop = cli("fleet", "stop")
        assert stop.output == (f"asked novel fleet (pid {other.pid}) to finish its ticks in "
                               "flight and stop\n")
        assert other.wait(timeout=30) == -signal.SIGTERM
    finally:
        other.kill()
        other.wait()


def test_named_projects_and_one_line_errors(projects_dir, cli):
    offline_books(projects_dir, 2)
    run = cli("fleet", "run", "book-02", "--ticks", "1")
    assert "book-01" not in run.output and "book-02: tick 1 " in run.output
    both = cli("fleet", "run", "book-01", "--all", str(projects_dir), ok=False)
    assert both.exit_code == 2 and "name projects or give --all DIR, not both" in both.output
    empty = cli("fleet", "run", "--all", str(projects_dir / "book-01" / "scenes"), ok=False)
    assert empty.exit_code == 1 and "Error: no projects under " in empty.output
    stop = cli("fleet", "stop", ok=False)
    assert stop.exit_code == 1
    assert stop.output == f"Error: no fleet is running from {projects_dir} (no live pid in " \
                          f"{projects_dir / '.novel-fleet.json'})\n"


@pytest.mark.local_model
@pytest.mark.skipif(default_gguf_path() is None, reason="SmolLM2 GGUF not installed")
def test_local_books_share_one_llama_cpp_server_with_a_slot_each(projects_dir, cli):
    books = [create_project(projects_dir / f"local-{i}", {
        "name": f"local-{i}", "premise": "A lighthouse keeper finds a drowned man's map."},
        config={"llm": {"provider": "local", "local_model": "smollm2-135m",
                        "planner_max_tokens": 200, "writer_max_tokens": 150,
                        "extractor_max_tokens": 200},
                "generation": {"scene_min_words": 20, "scene_max_words": 100}})
        for i in (1, 2)]
    run = cli("fleet", "run", "--ticks", "1", "--concurrency", "2")
    rows = read_state(projects_dir).books
    assert [r.state for r in rows] == ["done", "done"], run.output
    assert all(scene_ticks(b.scenes_dir) == [1] for b in books)
    assert read_state(projects_dir).requests >= 6        # each book's stages, via the gate
    usage = [json.loads(line) for b in books
             for line in (b.novel_dir / "usage.jsonl").read_text().splitlines()]
    assert {u["model"] for u in usage} == {"SmolLM2-135M-Instruct"}
    assert all(u["completion_tokens"] > 0 for u in usage)


# -- premises --------------------------------------------------------------------------

def test_new_from_a_yaml_file_of_premises(projects_dir, tmp_path, cli):
    path = tmp_path / "premises.yaml"
    path.write_text("- name: salt\n  premise: Two smugglers carry a letter.\n  genre: adventure\n"
                    "- title: The Glass Orchard\n  premise: Fruit that shows the future.\n"
                    "  provider: offline\n  preset: conservative\n")
    made = cli("new", "--premises", str(path), "--provider", "openai")
    assert made.output.splitlines()[0] == (f"Created 2 projects under {projects_dir}: salt, "
                                           "the-glass-orchard.")
    salt = Project(projects_dir / "salt").story_data()
    orchard = Project(projects_dir / "the-glass-orchard").story_data()
    assert salt["genre"] == "adventure" and salt["llm"] == {"provider": "openai"}
    assert orchard["llm"] == {"provider": "offline"} and orchard["preset"] == "conservative"
    assert orchard["title"] == "The Glass Orchard"


def test_new_from_jsonl_and_bad_entries_make_nothing(projects_dir, tmp_path, cli, snapshot):
    good = tmp_path / "books.jsonl"
    good.write_text('{"premise": "A clockmaker hears time stop."}\n\n'
                    '{"premise": "A ferry that never lands.", "name": "ferry"}\n')
    cli("new", "--premises", str(good))
    assert sorted(p.name for p in fleet_projects(projects_dir)) == ["books-001", "ferry"]
    before = snapshot(projects_dir)
    cases = {
        '{"premise": "x"}\n{"premise": "y", "colour": "red"}\n':
            "books.jsonl:2: premise 2: unknown key 'colour'",
        '{"premise": "x", "name": "new-one"}\n{"premise": "y"\n':
            "books.jsonl:2: not JSON: ",
        '{"premise": "x", "name": "a"}\n{"premise": "y", "name": "a"}\n':
            "books.jsonl:2: name 'a' is used twice (lines 1 and 2)",
        '{"premise": "x", "name": "z"}\n{"premise": "y", "name": "ferry"}\n':
            "books.jsonl:2: a project 'ferry' already exists",
        '{"premise": "x", "name": "q", "preset": "nonesuch"}\n': "nonesuch",
        '{"genre": "noir"}\n': "books.jsonl:1: premise 1: a 'premise' is needed",
    }
    for text, message in cases.items():
        good.write_text(text)
        result = cli("new", "--premises", str(good), ok=False)
        assert result.exit_code == 1 and message in result.output, (text, result.output)
        assert len(result.output.strip().splitlines()) == 1
        assert snapshot(projects_dir) == before
    mixed = cli("new", "x", "--premises", str(good), ok=False)
    assert mixed.exit_code == 2 and "give no NAME" in mixed.output


def test_yaml_premises_errors_name_the_line(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text("- premise: fine\n- premise: also fine\n  provider: cloud\n")
    with pytest.raises(Exception, match=r"p.yaml:2: premise 2: provider 'cloud' is not one"):
        read_premises(path)
    path.write_text("premise: not a list\n")
    with pytest.raises(Exception, match=r"p.yaml:1: expected a list of premises"):
        read_premises(path)


# -- through the test server -------------------------------------------------------------

def server_books(folder, server, names, **llm) -> list[Project]:
    return [create_project(folder / name, {
        "name": name, "premise": f"{name}: a lighthouse keeper finds a drowned man's map.",
        "preset": "balanced"},
        config={"llm": {"provider": "openai", "base_url": server.base_url,
                        "model": "gpt-4o-mini", "max_retries": 0, **llm},
                "daemon": {"failure_backoff": 0.05}}) for name in names]


def run_fleet(folder, books, **options) -> Fleet:
    fleet = Fleet(books, FleetOptions(**options), {"OPENAI_API_KEY": API_KEY}, folder=folder)
    fleet.run()
    return fleet


def test_the_limit_holds_and_a_429_storm_slows_the_fleet_once(projects_dir):
    storm: dict[str, float] = {}

    def storming(body):
        now = time.monotonic()
        storm.setdefault("start", now)      # the first 0.2 s of requests are all throttled
        if now - storm["start"] < 0.2:
            storm["429"] = storm.get("429", 0) + 1
            return {"status": 429, "error": "slow down", "headers": {"Retry-After": "0.6"}}
        return story_responder(body)

    server_side = Batching(storming, latency=0.02)
    with FakeOpenAIServer(server_side) as server:
        # each book's call loop tries a throttled request again, as outside a fleet
        books = server_books(projects_dir, server, [f"b{i}" for i in range(6)], max_retries=3)
        fleet = run_fleet(projects_dir, books, concurrency=3, ticks=2)
    stats = fleet.gate.stats
    assert stats.pauses == 1 and stats.throttled == storm["429"] >= 1
    assert server_side.peak <= 3
    for book in books:
        assert scene_ticks(book.scenes_dir) == [1, 2]
    rows = fleet.state.books
    assert all(r.state == "done" and r.failures == 0 and not r.last_error for r in rows)
    saved = json.loads((projects_dir / ".novel-fleet.json").read_text())
    assert saved["pauses"] == 1 and saved["state"] == "finished"
    assert "OPENAI_API_KEY" not in json.dumps(saved) and API_KEY not in json.dumps(saved)


def test_books_on_anthropic_share_one_client_and_a_429_storm_slows_them_once(projects_dir):
    storm: dict[str, float] = {}

    def storming(body):
        now = time.monotonic()
        storm.setdefault("start", now)      # the first 0.2 s of requests are all throttled
        if now - storm["start"] < 0.2:
            storm["429"] = storm.get("429", 0) + 1
            return {"status": 429, "error": "slow down", "headers": {"retry-after": "0.5"}}
        return story_responder(openai_body(body))

    server_side = Batching(storming, latency=0.02)
    with FakeAnthropicServer(server_side, api_key=ANTHROPIC_KEY) as server:
        books = [create_project(projects_dir / name, {
            "name": name, "premise": f"{name}: a keeper finds a drowned man's map.",
            "preset": "balanced"},
            config={"llm": {"provider": "anthropic", "base_url": server.base_url,
                            "max_retries": 3}, "daemon": {"failure_backoff": 0.05}})
            for name in ("a1", "a2", "a3", "a4")]
        fleet = Fleet(books, FleetOptions(concurrency=2, ticks=2),
                      {"ANTHROPIC_API_KEY": ANTHROPIC_KEY}, folder=projects_dir)
        fleet.run()
    stats = fleet.gate.stats
    # every request went through the gate: one pause for the storm, at most 2 in flight,
    # none streamed (the shared client's requests wait their turn at the gate)
    assert stats.pauses == 1 and stats.throttled == storm["429"] >= 1
    assert stats.requests == len(server.messages) and server_side.peak <= 2
    assert not any(body.get("stream") for body in server.messages)
    assert {r["headers"]["authorization"] for r in server.requests} == {f"Bearer {ANTHROPIC_KEY}"}
    for book in books:
        assert scene_ticks(book.scenes_dir) == [1, 2]
    assert all(r.state == "done" and r.failures == 0 for r in fleet.state.books)


def test_a_book_whose_requests_all_fail_is_parked_and_the_rest_finish(projects_dir):
    def doomed(body):
        if "doomed" in json.dumps(body["messages"]):
            return {"status": 500, "error": "this book breaks the server"}
        return story_responder(body)

    with FakeOpenAIServer(Batching(doomed, latency=0.01)) as server:
        books = server_books(projects_dir, server, ["fine-1", "doomed", "fine-2"])
        fleet = run_fleet(projects_dir, books, concurrency=2, ticks=2, max_failures=2)
    rows = {r.name: r for r in fleet.state.books}
    assert rows["doomed"].state == "parked" and rows["doomed"].failures == 2
    assert rows["doomed"].reason.startswith("parked after 2 failed ticks in a row (the last: "
                                            "tick 1 failed in planner: ")
    assert "HTTP 500: this book breaks the server" in rows["doomed"].reason
    assert scene_ticks(books[1].scenes_dir) == []
    assert scene_ticks(books[0].scenes_dir) == scene_ticks(books[2].scenes_dir) == [1, 2]
    assert rows["fine-1"].state == rows["fine-2"].state == "done"


def test_cost_ceilings_for_the_fleet_and_each_book(projects_dir, cli, monkeypatch):
    prices = {"input": 1000.0, "output": 1000.0}        # dollars per million tokens
    with FakeOpenAIServer(story_responder) as server:
        books = server_books(projects_dir, server, ["c1", "c2"], prices=prices)
        fleet = run_fleet(projects_dir, books, concurrency=2, ticks=5, book_max_cost=1.5)
        rows = fleet.state.books
        assert all(r.state == "ceiling" and " of --book-max-cost $1.50" in r.reason
                   for r in rows), rows
        assert all(1 <= r.ticks_run < 5 and r.spent <= 1.5 for r in rows)
        spent = fleet.state.spent
        monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
        run = cli("fleet", "run", "--ticks", "5", "--book-max-cost", "1.5", ok=False)
        assert run.exit_code == 4 and "c1: ceiling: cost ceiling: " in run.output
        fleet = run_fleet(projects_dir, books, concurrency=2, ticks=5,
                          max_cost=spent / 4)
    assert all(r.state == "ceiling" for r in fleet.state.books)
    assert "fleet cost ceiling" in fleet.state.books[0].reason
    assert fleet.state.ticks <= 2      # one tick each at most: their estimates pass it


def test_the_fleet_needs_no_temporal_and_says_how_to_get_it(projects_dir, cli, monkeypatch):
    import sys
    for name in [m for m in sys.modules if m == "temporalio" or m.startswith("temporalio.")
                 or m == "novel_agent.fleet.temporal"]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "temporalio", None)      # as if not installed
    books = offline_books(projects_dir, 2)
    cli("fleet", "run", "--ticks", "1")
    assert all(scene_ticks(b.scenes_dir) == [1] for b in books)
    for args in (["fleet", "run", "--ticks", "2", "--temporal", "127.0.0.1:7233"],
                 ["worker", "--temporal", "127.0.0.1:7233"]):
        result = cli(*args, ok=False)
        assert result.exit_code == 1 and result.output == (
            "Error: Temporal is the optional extra: pip install 'novel_agent[temporal]' (the "
            "single-machine `novel fleet run` needs none of it)\n")
    assert all(scene_ticks(b.scenes_dir) == [1] for b in books)
    unbounded = cli("fleet", "run", "--temporal", "127.0.0.1:7233", ok=False)
    assert unbounded.exit_code == 2 and "--temporal needs a bound" in unbounded.output
    priced = cli("fleet", "run", "--ticks", "2", "--max-cost", "1", "--temporal", "x:1", ok=False)
    assert priced.exit_code == 2 and "with --temporal the workers read each project's" \
        in priced.output


def test_the_live_view_redraws_in_place_on_a_terminal(capsys):
    from novel_agent.cli.fleet_cmd import View
    from novel_agent.fleet.view import BookState, FleetState

    view = View(quiet=False)
    view.tty = True                       # as on a terminal
    state = FleetState(pid=1, started="", concurrency=2,
                       books=[BookState("a", "/a"), BookState("b", "/b")])
    view.redraw(state)
    state.books[0].tick, state.books[0].state = 1, "ticking"
    view.redraw(state)
    first, second = capsys.readouterr().out.split("\033[3F")     # up the 3 lines drawn
    assert first.count("\033[2K") == second.count("\033[2K") == 3
    assert "\033[2Ka     tick    0" in first and "\033[2Ka     tick    1" in second
    assert "ticking" in second and second.splitlines()[-1].startswith("\033[2Kfleet  2 books")


def test_a_book_that_waits_for_its_author_is_parked_at_once_and_the_rest_finish(projects_dir,
                                                                              cli):
    from tests.support.ticking import run_ticks
    books = offline_books(projects_dir, 2)
    run_ticks(books[0], 3)
    books[0].scene_path(2).unlink()          # a scene deleted mid-book: doctor --fix's to mend
    run = cli("fleet", "run", "--ticks", "4", "--max-failures", "3", ok=False)
    assert "book-01: parked: waits for the author: " in run.output
    assert "novel doctor --fix" in run.output and "tick failed" not in run.output
    assert scene_ticks(books[0].scenes_dir) == [1, 3]
    assert scene_ticks(books[1].scenes_dir) == [1, 2, 3, 4]


def test_a_tick_whose_answer_could_not_be_used_runs_once_more_as_novel_tick_does(
        projects_dir):
    import novel_agent.tick.pipeline as pipeline
    from novel_agent.errors import ModelResponseError, TickError
    tried: list[int] = []

    def tick(session):
        tried.append(session.project.tick() + 1)
        if len(tried) == 1:
            error = TickError("tick 1 failed in writer: mostly copies", stage="writer")
            error.__cause__ = ModelResponseError("mostly copies", stage="writer")
            raise error
        return pipeline.tick(session)

    (book,) = offline_books(projects_dir, 1)
    events = []
    fleet = Fleet([book], FleetOptions(ticks=2), {}, folder=projects_dir, tick=tick,
                  on_event=events.append)
    fleet.run()
    assert tried == [1, 1, 2] and scene_ticks(book.scenes_dir) == [1, 2]
    assert [(e.kind, e.message) for e in events if e.kind in ("note", "failure")] == [
        ("note", "note: tick 1 failed in writer: mostly copies; nothing was committed: "
                 "writing it again")]
    assert fleet.state.books[0].failures == 0
