"""`novel serve` over HTTP: every page, the forms and what they write, the live feed, the
daemon started and stopped from a page, and the security rules (token, CSRF, Host, path
traversal, 4xx not tracebacks, no API key shown). The browser test is test_serve_browser.py."""

from __future__ import annotations

import http.client
import re
import time

import pytest

import novel_agent.web.pages as pages
from novel_agent.daemon.heartbeat import Heartbeat, read_heartbeat, running, write_heartbeat
from novel_agent.files import dump_yaml, read_yaml
from novel_agent.reports.prose import prose_report
from tests.support.clirunner import invoke
from tests.support.projects import files_of
from tests.support.repo import README, ROOT, page
from tests.support.ticking import run_ticks
from tests.support.web_server import make_site, serving

SECRET = "test-secret"


@pytest.fixture
def book(project):
    """harbour with 5 offline scenes."""
    run_ticks(project, 5)
    return project


def test_the_library_lists_each_project_with_its_state(book, projects_dir):
    with serving(make_site(projects_dir)) as client:
        page = client.get("/")
    assert page.status == 200
    row = re.search(r'<tr id="project-harbour">(.*?)</tr>', page.text, re.S).group(1)
    cells = [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", row,
                                                                      re.S)]
    words = sum(s.words for s in pages.load_scenes(book.scenes_dir))
    assert cells == ["harbour", "5", f"{words:,}", "never run", "none", "$0"]


def test_the_library_counts_a_scene_edited_by_hand(book, projects_dir):
    def words_shown(client) -> str:
        return re.search(r'<tr id="project-harbour">.*?<td class="num">\d+</td>\s*'
                         r'<td class="num">([\d,]+)</td>', client.get("/").text, re.S).group(1)

    site = make_site(projects_dir)
    with serving(site) as client:
        before = words_shown(client)
        path = book.scene_path(3)
        path.write_text(path.read_text() + "\nFour more words here.\n")
        after = words_shown(client)
    assert int(after.replace(",", "")) == int(before.replace(",", "")) + 4
    assert len(site.word_counts) == 5        # each scene read once, the edited one again


def test_the_book_is_read_a_page_at_a_time(book, projects_dir, monkeypatch):
    monkeypatch.setattr(pages, "PAGE_SCENES", 2)
    with serving(make_site(projects_dir)) as client:
        first, last, past = (client.get(f"/p/harbour/book?page={n}") for n in (1, 3, 4))
    assert 'id="scene-1"' in first.text and 'id="scene-2"' in first.text
    assert 'id="scene-3"' not in first.text and "page 1 of 3 (5 scenes)" in first.text
    assert 'id="scene-5"' in last.text and 'id="scene-4"' not in last.text
    assert past.status == 404 and "no page 4: the book has 3 pages" in past.text
    assert "Traceback" not in past.text


def test_a_book_page_reads_only_its_own_scenes(book, projects_dir, monkeypatch):
    import novel_agent.story.scenes as scenes
    read, real = [], scenes.load_scene
    monkeypatch.setattr(scenes, "load_scene", lambda path: read.append(path.name) or real(path))
    monkeypatch.setattr(pages, "PAGE_SCENES", 2)
    with serving(make_site(projects_dir)) as client:
        assert client.get("/p/harbour/book?page=2").status == 200
    assert read == ["scene_003.md", "scene_004.md"]


def test_a_scene_page_shows_its_plan_bullets_and_memory_changes(book, projects_dir):
    plan = read_yaml(book.plan_path(2))
    with serving(make_site(projects_dir)) as client:
        page = client.get("/p/harbour/scene/2")
        missing = client.get("/p/harbour/scene/9")
    assert page.status == 200
    scene = pages.load_scene(book.scene_path(2))
    assert f"<h1>{scene.title}</h1>" in page.text
    for text in [plan["intention"], *scene.summary, *plan["memory_changes"]]:
        assert _escape(text) in page.text
    assert re.search(r'rel="prev" href="http://127.0.0.1:\d+/p/harbour/scene/1"', page.text)
    assert missing.status == 404 and "no scene 9 in harbour" in missing.text


def _escape(text: str) -> str:
    from markupsafe import escape
    return str(escape(text))


def test_an_export_is_made_then_downloaded(book, projects_dir):
    with serving(make_site(projects_dir)) as client:
        made = client.post("/p/harbour/export", {"format": "html", "csrf": SECRET})
        assert made.status == 303 and made.headers["location"].endswith(
            "/p/harbour/download/harbour.html")
        got = client.get("/p/harbour/download/harbour.html")
    assert got.status == 200 and "<h1>harbour</h1>" in got.text
    assert got.headers["content-disposition"] == 'attachment; filename="harbour.html"'
    assert (book.root / "export" / "harbour.html").read_text() == got.text


@pytest.mark.parametrize("path", [
    "/p/harbour/download/..%2Fproject.yaml",
    "/p/harbour/download/../project.yaml",
    "/p/harbour/download/%2e%2e/%2e%2e/harbour/project.yaml",
    "/p/harbour/download/%2Fetc%2Fpasswd",
    "/p/harbour/download/..%2F.novel%2Fstate.yaml",
    "/p/..%2Fharbour/book",
    "/p/%2e%2e/book",
    "/static/..%2F..%2Fweb%2Fapp.py",
    "/p/harbour/lore/..%2Fproject.yaml",
])
def test_no_file_outside_what_is_served_can_be_read(book, projects_dir, path):
    (book.root / "export").mkdir()
    with serving(make_site(projects_dir)) as client:
        answer = client.get(path)
    assert answer.status == 404, (path, answer.status)
    assert "premise" not in answer.text and "tick:" not in answer.text
    assert "import" not in answer.text and "Traceback" not in answer.text


def test_the_author_s_note_is_written_with_its_expiry(book, projects_dir):
    with serving(make_site(projects_dir)) as client:
        saved = client.post("/p/harbour/steer", {"text": "Bring the storm ashore.",
                                                 "ticks": "2", "csrf": SECRET})
        before = files_of(book.root)
        bad = client.post("/p/harbour/steer", {"text": "Another note.", "until": "soon",
                                               "csrf": SECRET})
        assert files_of(book.root) == before
        run_ticks(book, 1)
        read = client.get("/p/harbour/steer")
    assert saved.status == 200 and "saved steer.md" in saved.text
    assert book.steer_file.read_text() == "---\nticks: 2\n---\n\nBring the storm ashore.\n"
    assert '"Bring the storm ashore." (in force to tick 7: 2 ticks left)' in _plain(saved.text)
    assert "The last tick (5) read no note." in saved.text
    assert bad.status == 422
    assert "not saved: " in bad.text and "'until' must be a whole number of at least 1" in \
        _plain(bad.text)
    assert "read since tick 6" in read.text
    assert "The last tick (6) read a note: its writer&#39;s prompt held it." in read.text


def _plain(text: str) -> str:
    import html
    return html.unescape(text)


def test_a_lore_entry_added_on_the_page_is_in_novel_lore_list(book, projects_dir):
    with serving(make_site(projects_dir)) as client:
        added = client.post("/p/harbour/lore", {
            "name": "The brass locket", "keys": "locket, brass locket", "priority": "5",
            "content": "Edda's mother's; it holds a key.", "csrf": SECRET})
        before = files_of(book.root)
        bad_regex = client.post("/p/harbour/lore", {
            "name": "Ships", "keys": "ship(", "regex": "on", "content": "Ships.",
            "csrf": SECRET})
        no_keys = client.post("/p/harbour/lore", {"name": "Nothing", "keys": "",
                                                  "content": "x", "csrf": SECRET})
        again = client.post("/p/harbour/lore", {"name": "The brass locket", "keys": "x",
                                                "content": "y", "csrf": SECRET})
        listed = client.get("/p/harbour/lore")
    assert added.status == 200 and "wrote lore/the_brass_locket.yaml" in added.text
    out = invoke("lore", "list", "-p", "harbour")
    assert "   5  the_brass_locket     The brass locket               locket, brass locket" \
        in out.output
    assert bad_regex.status == 422 and "is not a valid regular expression" in bad_regex.text
    assert 'name="keys" value="ship("' in bad_regex.text           # what was typed stays
    assert '<input type="checkbox" name="regex" checked>' in bad_regex.text
    assert no_keys.status == 422 and "no &#39;keys&#39;: the entry would never fire" in \
        no_keys.text
    assert again.status == 422 and "a lore file of that name exists" in again.text
    assert files_of(book.root) == before
    assert "Edda&#39;s mother&#39;s; it holds a key." in listed.text


def test_a_lore_file_is_edited_only_when_it_validates(book, projects_dir):
    path = book.lore_dir / "locket.yaml"
    path.write_text("keys: [locket]\ncontent: A key inside.\n")
    with serving(make_site(projects_dir)) as client:
        shown = client.get("/p/harbour/lore/locket.yaml")
        bad = client.post("/p/harbour/lore/locket.yaml", {"text": "keys: [locket]\npriority: high\n"
                                                          "content: x\n", "csrf": SECRET})
        assert path.read_text() == "keys: [locket]\ncontent: A key inside.\n"
        good = client.post("/p/harbour/lore/locket.yaml", {
            "text": "keys: [locket, key]\ncontent: A key inside.\n", "csrf": SECRET})
    assert "content: A key inside." in shown.text
    assert bad.status == 422 and "locket.yaml:2: &#39;priority&#39; must be a whole number" \
        in bad.text
    assert good.status == 200 and path.read_text() == "keys: [locket, key]\ncontent: A key inside.\n"


def test_memory_shows_a_loops_payoff_and_its_progressing_or_deferred_status_as_open(book,
                                                                                   projects_dir):
    memory = pages.load_memory(book.memory_dir)
    first, second = memory.loops[:2]
    for loop, fields in ((first, {"status": "progressing", "payoff": "3", "keep_open": True}),
                         (second, {"status": "deferred", "payoff": "4.2"})):
        path = book.memory_dir / "loops" / f"{loop['id']}.yaml"
        path.write_text(dump_yaml({**read_yaml(path), **fields}))
    with serving(make_site(projects_dir)) as client:
        page = client.get("/p/harbour/memory")
    for loop, cell in ((first, "progressing · payoff 3 · kept open"),
                       (second, "deferred · payoff 4.2")):
        row = re.search(rf"<td>{re.escape(_escape(loop['description']))}(.*?)</tr>", page.text,
                        re.S).group(0)
        assert f"<td>{cell}</td><td class=\"num\">{6 - int(loop['opened_in'])}</td>" in row


def test_memory_shows_loops_with_their_age_and_the_overdue_ones(book, projects_dir):
    data = read_yaml(book.project_file)
    data["generation"] = {"loop_overdue_after": 1}
    book.project_file.write_text(dump_yaml(data))
    memory = pages.load_memory(book.memory_dir)
    with serving(make_site(projects_dir)) as client:
        page = client.get("/p/harbour/memory")
    assert page.status == 200
    for loop in memory.loops:
        row = re.search(rf"<tr class=\"[a-z]*\"><td>{re.escape(_escape(loop['description']))}"
                        r"(.*?)</tr>", page.text, re.S).group(0)
        age = 6 - int(loop["opened_in"])
        assert ("overdue" in row) == (age > 1)
        assert re.search(rf'<a href="http://127.0.0.1:\d+/p/harbour/scene/{loop["opened_in"]}">', row)
    assert f"Facts ({len(memory.facts)})" in page.text
    for person in memory.characters.values():
        assert re.search(rf"<tr><td>{re.escape(_escape(person['name']))}</td>.*?"
                         rf'<a href="http://127.0.0.1:\d+/p/harbour/scene/{person["first_seen"]}">',
                         page.text)


def test_the_context_page_is_what_novel_context_reports(book, projects_dir):
    out = invoke("context", "-p", "harbour", "--json")
    import json
    report = json.loads(out.output)
    with serving(make_site(projects_dir)) as client:
        page = client.get("/p/harbour/context")
        planner = client.get("/p/harbour/context?stage=planner&prompt=1")
        bad = client.get("/p/harbour/context?stage=poet")
    assert f"budget <strong>{report['budget']:,}</strong>" in page.text
    assert f"used <strong>{report['tokens']:,}</strong>" in page.text
    assert page.text.count('<span class="seg ') == sum(1 for s in report["sections"]
                                                      if s["tokens"])
    assert f"Items ({len(report['items'])})" in page.text
    counts = re.findall(r'<td class="num">(\d+)</td></tr>', page.text.split("<h2>Items")[0])
    assert counts == [str(len(s["items"])) for s in report["sections"] if s["tokens"]]
    assert "Show the full prompt" in page.text and "<pre class=\"prompt\">" not in page.text
    assert "Context of tick 6: planner" in planner.text and '<pre class="prompt">' in planner.text
    assert bad.status == 400 and "no stage &#39;poet&#39;" in bad.text


def test_the_numbers_page_has_the_stats_and_the_usage_table(book, projects_dir):
    site = make_site(projects_dir)
    with serving(site) as client:
        page = client.get("/p/harbour/numbers")
        png = client.request_bytes("/p/harbour/stats.png")
        made = site.stats[book.root][1]
        assert client.get("/p/harbour/numbers").text == page.text
        assert client.request_bytes("/p/harbour/stats.png") == png
        assert site.stats[book.root][1] is made              # not made again: nothing changed
        run_ticks(book, 1)
        later = client.get("/p/harbour/numbers")
    assert "6 scenes" in later.text and site.stats[book.root][1] is not made
    assert "<th>words per scene</th>" in page.text and "5 scenes" in page.text
    assert re.search(r'<tr class="total"><td>total</td><td class="num">1[05]</td>', page.text)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_numbers_page_has_the_prose_numbers_and_the_distance_once_styled(book, projects_dir):
    site = make_site(projects_dir)
    with serving(site) as client:
        page = client.get("/p/harbour/numbers")
        (book.root / "style.yaml").write_text("tense: present\nsentence_mean: 20\n")
        styled = client.get("/p/harbour/numbers")
    prose = prose_report(book)
    summary = prose.summary()
    slop, mtld = summary["slop_per_1000"], summary["mtld"]
    degraded = mtld["degradation"]
    assert (f'<tr id="prose-mtld"><td>lexical diversity (MTLD)</td><td class="num">'
            f'{mtld["mean"]:.0f}</td><td class="num">{mtld["last"]:.0f}</td><td class="num">'
            f'{degraded["first"]:.0f} → {degraded["last"]:.0f}</td></tr>') in page.text
    assert f'<tr id="prose-slop_per_1000"><td>slop per 1,000 words</td><td class="num">' \
           f'{slop["mean"]:.1f}</td>' in page.text
    [chapter] = prose.chapters                          # 5 scenes, no checkpoint yet
    assert f"<tr><td>{chapter.title}</td><td class=\"num\">{chapter.numbers.words:,}</td>" \
        in page.text
    assert "no style.yaml" in page.text and 'id="prose-distance"' not in page.text
    far = prose_report(book).summary()["distance"]
    assert f'<tr id="prose-distance"><td>distance from style.yaml</td><td class="num">' \
           f'{far["mean"]:.2f}</td>' in styled.text
    assert "no style.yaml" not in styled.text and "<th class=\"num\">distance</th>" in styled.text


def test_the_live_feed_sends_each_landed_tick_and_log_line(book, projects_dir):
    log = book.log_dir / "daemon.log"
    log.write_text("2026-11-25 07:00:00,000 INFO    tick 5 done\n")
    write_heartbeat(book, Heartbeat(pid=1, started="2026-11-25T06:59:00+00:00", state="failed",
                                    ticks=2, last_error="tick 6 failed in planner: boom",
                                    error_tick=6, ended="2026-11-25T07:00:00+00:00"))
    with serving(make_site(projects_dir)) as client:
        conn = http.client.HTTPConnection("127.0.0.1", client.port, timeout=20)
        conn.request("GET", f"/p/harbour/events?tick=5&log={log.stat().st_size}",
                      headers={"Host": f"127.0.0.1:{client.port}"})
        response = conn.getresponse()
        assert response.headers["content-type"].startswith("text/event-stream")
        events = _read_events(response, 1)
        assert events == [("daemon", '<p class="state"><span class="dot off"></span> daemon '
                                     "failed at 2026-11-25T07:00:00+00:00 after 2 ticks</p>\n"
                                     '<p class="state error">last error: tick 6: tick 6 failed '
                                     "in planner: boom</p>")]
        run_ticks(book, 1)
        with log.open("a") as f:
            f.write("2026-11-25 07:00:01,000 ERROR   tick 7 failed in planner: boom\n")
        more = _read_events(response, 2)
        conn.close()
    kinds = {kind: data for kind, data in more}
    assert '<li class="tick" id="tick-6">' in kinds["tick"]
    assert '<li class="failure"><span class="time">07:00:01</span> tick 7 failed in planner: ' \
           'boom</li>' == kinds["log"]


def _read_events(response, count: int) -> list[tuple[str, str]]:
    """The next `count` events of an SSE stream (the socket's timeout bounds the wait)."""
    events, kind, data = [], "", []
    while len(events) < count:
        line = response.fp.readline().decode().rstrip("\n")
        if line.startswith("event: "):
            kind = line[7:]
        elif line.startswith("data: "):
            data.append(line[6:])
        elif not line and kind:
            events.append((kind, "\n".join(data)))
            kind, data = "", []
    return events


def test_the_daemon_starts_and_stops_from_the_page(book, projects_dir):
    with serving(make_site(projects_dir)) as client:
        started = client.post("/p/harbour/daemon/start", {"ticks": "0", "interval": "0.2",
                                                          "csrf": SECRET})
        assert started.status == 200 and "started novel run (pid" in started.text
        twice = client.post("/p/harbour/daemon/start", {"csrf": SECRET},
                            headers={"HX-Request": "true"})
        assert twice.status == 400 and twice.text.startswith(
            '<p class="message error" role="status">a daemon is already running on '
            "&#39;harbour&#39;")       # a fragment for the page's htmx, not a whole page
        _wait(lambda: book.tick() >= 7)
        stopped = client.post("/p/harbour/daemon/stop", {"csrf": SECRET})
        assert "asked novel run (pid" in stopped.text
        _wait(lambda: not running(read_heartbeat(book)))
        again = client.post("/p/harbour/daemon/stop", {"csrf": SECRET})
    assert read_heartbeat(book).state == "stopped"
    assert again.status == 400 and "no daemon is running on &#39;harbour&#39;" in again.text
    assert "tick 7" in (book.log_dir / "daemon.log").read_text()
    out = book.log_dir / "serve_run.out"      # the run prints its end after its last heartbeat
    _wait(lambda: "stopped by SIGTERM" in out.read_text(), seconds=10)


def _wait(condition, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


# ---------------------------------------------------------------- security


def test_a_form_without_the_secret_or_from_another_site_is_refused(book, projects_dir):
    with serving(make_site(projects_dir)) as client:
        assert client.csrf("/p/harbour/steer") == SECRET
        no_secret = client.post("/p/harbour/steer", {"text": "x"})
        wrong = client.post("/p/harbour/steer", {"text": "x", "csrf": "guess"})
        other_site = client.post("/p/harbour/steer", {"text": "x", "csrf": SECRET},
                                 headers={"Origin": "http://evil.example"})
        export = client.post("/p/harbour/export", {"format": "md"})
        start = client.post("/p/harbour/daemon/start", {})
    for answer in (no_secret, wrong, export, start):
        assert answer.status == 403 and "did not come from this server" in answer.text
    assert other_site.status == 403 and "another site (http://evil.example)" in other_site.text
    assert not book.steer_file.exists() and not (book.root / "export").exists()
    assert read_heartbeat(book) is None
    assert "access-control-allow-origin" not in no_secret.headers


def test_a_foreign_host_header_is_refused_on_loopback(book, projects_dir):
    with serving(make_site(projects_dir)) as client:
        client.host = "rebound.example"
        answer = client.get("/")
    assert answer.status == 400 and "Host 'rebound.example:" in answer.text


def test_with_a_token_every_request_needs_it(book, projects_dir):
    with serving(make_site(projects_dir, token="s3cret-token"), host="0.0.0.0") as client:
        none = client.get("/p/harbour/book")
        wrong = client.get("/?token=nope")
        login = client.get("/p/harbour/book?token=s3cret-token&page=1")
        cookie = login.headers["set-cookie"]
        with_cookie = client.get("/p/harbour/book", headers={"Cookie": cookie.split(";")[0]})
        bearer = client.get("/", headers={"Authorization": "Bearer s3cret-token"})
    assert none.status == 401 and wrong.status == 401 and "needs its token" in none.text
    assert login.status == 200 and 'content="0; url=/p/harbour/book?page=1"' in login.text
    assert cookie.startswith(f"novel_token_{client.port}=s3cret-token;")
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie
    assert with_cookie.status == 200 and bearer.status == 200


def test_no_page_shows_the_api_key(book, projects_dir):
    key = "sk-test-never-shown-0123456789"
    site = make_site(projects_dir, env={"OPENAI_API_KEY": key})
    with serving(site) as client:
        for path in ("/", "/p/harbour/book", "/p/harbour/scene/1", "/p/harbour/live",
                     "/p/harbour/steer", "/p/harbour/lore", "/p/harbour/memory",
                     "/p/harbour/context?prompt=1", "/p/harbour/numbers"):
            page = client.get(path)
            assert page.status == 200 and key not in page.text, path


def test_every_answer_carries_the_protective_headers(book, projects_dir):
    with serving(make_site(projects_dir)) as client:
        page = client.get("/p/harbour/book")
        missing = client.get("/nowhere")
    assert page.headers["x-frame-options"] == "DENY"
    assert page.headers["x-content-type-options"] == "nosniff"
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert missing.status == 404 and "no page at /nowhere" in missing.text


# ---------------------------------------------------------------- the command


def test_novel_serve_off_loopback_makes_and_prints_a_token(projects_dir, project, monkeypatch):
    import uvicorn
    seen = {}
    monkeypatch.setattr(uvicorn.Server, "run", lambda self: seen.update(
        app=self.config.app, host=self.config.host, port=self.config.port))
    result = invoke("serve", "--host", "0.0.0.0", "--port", "8123")
    token = seen["app"].site.token
    assert len(token) >= 24
    assert result.output == (f"serving the projects under {projects_dir} at "
                             f"http://127.0.0.1:8123/?token={token}  (Ctrl-C stops)\n")
    assert seen["host"] == "0.0.0.0" and seen["port"] == 8123


def test_novel_serve_on_loopback_needs_no_token(projects_dir, project, monkeypatch):
    import uvicorn
    seen = {}
    monkeypatch.setattr(uvicorn.Server, "run", lambda self: seen.update(
        app=self.config.app, host=self.config.host, port=self.config.port))
    result = invoke("serve", "-p", "harbour")
    assert result.output == "serving harbour at http://127.0.0.1:8000/  (Ctrl-C stops)\n"
    assert seen["app"].site.token == "" and seen["host"] == "127.0.0.1"
    assert [p.name for p in seen["app"].site.projects()] == ["harbour"]


def test_novel_serve_refuses_a_missing_projects_folder(projects_dir):
    result = invoke("serve", "--projects", str(projects_dir / "none"))
    assert result.exit_code == 1
    assert result.output == (f"Error: no projects folder {projects_dir / 'none'}: create a "
                             "project with `novel new NAME`, or give --projects DIR\n")


def test_novel_serve_with_a_token_and_open(projects_dir, project, monkeypatch, tmp_path):
    import webbrowser

    import uvicorn
    seen, opened = {}, []
    monkeypatch.setattr(uvicorn.Server, "run", lambda self: seen.update(
        app=self.config.app, host=self.config.host, port=self.config.port))
    monkeypatch.setattr(webbrowser, "open", opened.append)
    monkeypatch.chdir(tmp_path.parent)
    result = invoke("serve", "--projects", str(projects_dir), "--token",
                    "abc123", "--port", "9000", "--open")
    url = "http://127.0.0.1:9000/?token=abc123"
    assert result.output == f"serving the projects under {projects_dir} at {url}  (Ctrl-C stops)\n"
    assert opened == [url] and seen["app"].site.token == "abc123"
    assert [p.name for p in seen["app"].site.projects()] == ["harbour"]


def test_the_docs_show_the_browser_s_screenshots():
    text = page("guides/browser.md")
    for name in ("library", "scene", "live", "context"):
        assert f"](../serve_{name}.png)" in text
        assert (ROOT / "docs" / f"serve_{name}.png").read_bytes()[:8] == \
            b"\x89PNG\r\n\x1a\n"
    assert "`SCREENSHOTS_DIR=docs ./scripts/test tests/web/test_serve_browser.py`" in text
    assert "](docs/serve_scene.png)" in README.read_text()


def test_the_docs_walk_through_the_writer_s_room_with_every_screenshot_in_order():
    text = page("guides/browser.md")
    linked = re.findall(r"\]\(\.\./(walkthrough_[^)]+\.png)\)", text)
    drawn = sorted(p.name for p in (ROOT / "docs").glob("walkthrough_*.png"))
    assert linked == drawn and len(drawn) == 7            # each once, in the steps' order
    for name in drawn:
        assert (ROOT / "docs" / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert ("`SCREENSHOTS_DIR=docs ./scripts/test tests/web/test_writers_room_walkthrough.py`"
            in text)


def test_a_daemon_that_cannot_start_says_why(book, projects_dir):
    book.acquire_lock()                  # a `novel tick` holds the project
    try:
        with serving(make_site(projects_dir)) as client:
            answer = client.post("/p/harbour/daemon/start", {"csrf": SECRET},
                                 headers={"HX-Request": "true"})
    finally:
        book.release_lock()
    assert answer.status == 400
    assert answer.text.startswith('<p class="message error" role="status">novel run stopped at '
                                  "once (exit 1): project &#39;harbour&#39; is busy: process ")
    assert read_heartbeat(book) is None


def test_the_live_feed_ends_when_the_server_stops(book):
    import asyncio

    from novel_agent.web.live import feed
    stops = iter([False, True])

    async def collect() -> list[str]:
        return [event async for event in feed(
            book, since_tick=5, log_offset=0, poll=0, render_tick=str, render_log=str,
            render_state=lambda *state: "state", stopping=lambda: next(stops))]

    assert asyncio.run(collect()) == ["retry: 1000\n\n", "event: daemon\ndata: state\n\n"]


def test_an_unexpected_failure_is_a_500_with_one_line(book, projects_dir, monkeypatch):
    import novel_agent.web.app as app

    def broken(project, page):
        raise KeyError("boom")

    monkeypatch.setattr(app, "book_page", broken)
    with serving(make_site(projects_dir)) as client:
        answer = client.get("/p/harbour/book")
    assert answer.status == 500
    assert ("internal error (KeyError): the server could not make this page; the files are "
            "unchanged") in answer.text
    assert "Traceback" not in answer.text and "boom" not in answer.text


def test_a_local_models_stream_reaches_the_live_feed(book, monkeypatch):
    """`novel run` shares its model's progress (.novel/progress.json, at most once a
    second); while the daemon runs, the feed sends it as a `progress` event."""
    import asyncio
    import os

    from novel_agent.daemon.heartbeat import ProgressFile, read_progress
    from novel_agent.models.base import Progress
    from novel_agent.web.live import feed

    now = iter([0.0, 0.4, 1.2])
    shared = ProgressFile(book, clock=lambda: next(now))
    shared.update(Progress("writer", 3.0, tokens=20, generating=2.0))
    shared.update(Progress("writer", 3.4, tokens=26, generating=2.4))      # too soon: kept
    assert read_progress(book)["tokens"] == 20
    shared.update(Progress("writer", 4.2, tokens=35, generating=3.2))
    assert read_progress(book) == {"stage": "writer", "seconds": 4.2, "tokens": 35,
                                   "tok_s": 10.9, "prompt_done": 0, "prompt_total": 0}
    import novel_agent.daemon.heartbeat as heartbeat
    monkeypatch.setattr(heartbeat, "is_novel_process", lambda pid: True)   # as `novel run`
    write_heartbeat(book, Heartbeat(pid=os.getpid(), started="2026-11-25T06:59:00+00:00",
                                    state="ticking"))
    stops = iter([False, True])

    async def collect() -> list[str]:
        return [event async for event in feed(
            book, since_tick=5, log_offset=0, poll=0, render_tick=str, render_log=str,
            render_state=lambda *state: "state", stopping=lambda: next(stops))]

    assert "event: progress\ndata: writer 4.2s  35 tokens  10.9 tok/s\n\n" in asyncio.run(collect())


def test_a_scene_linked_out_of_the_project_is_not_served_nor_exported(book, projects_dir,
                                                                      tmp_path):
    """The web server and export refuse the links every command refuses (issue 50, item
    1): the file it names is not read, its text in no page and no export."""
    secret = tmp_path / "passwd"
    secret.write_text("root:x:0:0:THE-SECRET-LINE\n")
    book.scene_path(3).unlink()
    book.scene_path(3).symlink_to(secret)
    with serving(make_site(projects_dir)) as client:
        answers = [client.get(path) for path in ("/p/harbour/scene/3", "/p/harbour/book",
                                                  "/p/harbour", "/")]
        made = client.post("/p/harbour/export", {"format": "html", "csrf": SECRET})
    for answer in [*answers, made]:
        assert "THE-SECRET-LINE" not in answer.text, answer.text
    assert "scene_003.md: a link to outside the project, not read" in answers[0].text
    exported = list((book.root / "export").glob("*")) if (book.root / "export").is_dir() else []
    assert all("THE-SECRET-LINE" not in p.read_text(errors="replace") for p in exported)
