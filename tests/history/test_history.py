"""The book's history: one git entry per landed tick, import piece, summary and hand
edit (novel_agent.history.store), `novel log`, `novel diff`, and plain git reading it."""

from __future__ import annotations

import os
import signal
import subprocess

from novel_agent.history.store import History, describe
from novel_agent.models.offline import OfflineModel
from novel_agent.tick.pipeline import tick
from novel_agent.tick.session import Session
from novel_agent.web.live import run_output
from tests.support.crashes import forked_tick
from tests.support.ticking import run_ticks


def subjects(project) -> list[str]:
    return [e.subject for e in History(project).entries()]


def test_each_tick_and_summary_is_one_entry(project, cli):
    run_ticks(project, 11)
    entries = History(project).entries()
    assert [e.kind for e in entries][:4] == ["tick", "summary", "tick", "tick"]
    assert entries[-1].subject == "history begins at tick 0"
    ticks = [e for e in entries if e.kind == "tick"]
    assert [e.tick for e in ticks] == list(range(11, 0, -1))
    scene = project.scene_path(11).read_text()
    assert ticks[0].subject.startswith("tick 11: ") and ticks[0].subject[9:] in scene
    assert ticks[0].words and f"words: {ticks[0].words}" in scene
    assert entries[1].subject == "summaries: checkpoint_010, overall"
    shown = cli("log", "-p", "harbour", "-n", "3").stdout.splitlines()
    assert len(shown) == 3
    assert f"tick 11   {ticks[0].subject}  {ticks[0].words} words  [plan 11, scene 11" in shown[0]
    assert "summaries: checkpoint_010, overall  [checkpoint_010, overall]" in shown[1]


def test_edits_by_hand_get_their_own_entry_before_the_next_tick(project, cli):
    run_ticks(project, 3)
    scene = project.scene_path(2)
    scene.write_text(scene.read_text() + "\nA line of the author's.\n")
    mara = next((project.memory_dir / "characters").glob("*.yaml"))
    mara.write_text(mara.read_text() + "# noted by hand\n")
    result = cli("tick", "-p", "harbour")
    edited = f"edited by hand: memory/characters/{mara.name}, scenes/scene_002.md"
    assert "history" not in result.output       # recorded quietly as the project opens
    assert subjects(project)[:2] == [subjects(project)[0], edited]
    assert subjects(project)[0].startswith("tick 4: ")
    assert History(project).entries()[1].kind == "hand"
    # a daemon's next tick (no command opens the project between) records and says it
    (project.root / "steer.md").write_text("Rain all day.\n")
    with project.locked(), Session.open(project, project.config(),
                                        make_model=lambda: OfflineModel()) as session:
        ticked = tick(session)
    assert "history: edited by hand: steer.md" in ticked.notices
    assert subjects(project)[1] == "edited by hand: steer.md"


def test_a_tick_killed_before_its_entry_is_recorded_late(project, cli):
    run_ticks(project, 2)
    assert forked_tick(project, "after_commit") == -signal.SIGKILL
    status = cli("status", "-p", "harbour")
    assert "note: history: tick 3 (recorded late)" in status.output
    assert "branch      main  (4 entries in .novel/history.git)" in status.output
    assert History(project).head().tick == 3


def test_nothing_changed_makes_no_entry(project, cli):
    run_ticks(project, 2)
    before = subjects(project)
    cli("status", "-p", "harbour")
    cli("log", "-p", "harbour")
    assert subjects(project) == before


def test_diff_shows_the_story_between_two_ticks(project, cli):
    run_ticks(project, 3)
    out = cli("diff", "1", "3", "-p", "harbour").stdout
    assert "+++ b/scenes/scene_003.md" in out and "+++ b/scenes/scene_002.md" in out
    assert "memory/" in out and ".novel/" not in out and "plans/" not in out
    stat = cli("diff", "2", "3", "-p", "harbour", "--stat").stdout
    assert "scenes/scene_003.md" in stat and "scene_002" not in stat
    same = cli("diff", "3", "3", "-p", "harbour").stdout
    assert same.strip() == "no change in the story from tick 3 to tick 3"
    missing = cli("diff", "1", "9", "-p", "harbour", ok=False)
    assert missing.exit_code == 1
    assert "Error: no history entry for tick 9 on branch 'main' (its last tick is 3)" \
        in missing.output


def test_plain_git_reads_the_history_and_sees_a_clean_tree(project):
    run_ticks(project, 2)
    git = ["git", "--git-dir=.novel/history.git"]
    env = {"PATH": os.environ["PATH"], "HOME": str(project.root)}
    log = subprocess.run([*git, "log", "--format=%s"], cwd=project.root, env=env,
                         capture_output=True, text=True, check=True).stdout.splitlines()
    assert log[0].startswith("tick 2: ") and log[-1] == "history begins at tick 0"
    status = subprocess.run([*git, "status", "--porcelain"], cwd=project.root, env=env,
                            capture_output=True, text=True, check=True).stdout
    assert status == ""


def test_a_project_inside_the_users_own_repository(projects_dir, cli):
    env = {"PATH": os.environ["PATH"], "HOME": str(projects_dir),
           "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", "init", "-q"], cwd=projects_dir, env=env, check=True)
    (projects_dir / ".gitignore").write_text("*.yaml\n")     # theirs: not ours to obey
    cli("new", "harbour", "--premise", "A keeper finds a map.", "--provider", "offline")
    project_root = projects_dir / "harbour"
    (project_root / ".gitignore").write_text(".novel/\n")
    cli("tick", "-p", "harbour")
    names = subprocess.run(["git", "--git-dir=.novel/history.git", "ls-files"],
                           cwd=project_root, env=env, capture_output=True, text=True,
                           check=True).stdout.split()
    assert "project.yaml" in names and ".novel/state.yaml" in names
    assert "scenes/scene_001.md" in names and not any("index.db" in n for n in names)
    theirs = subprocess.run(["git", "status", "--porcelain"], cwd=projects_dir, env=env,
                            capture_output=True, text=True, check=True).stdout
    assert "harbour/" in theirs      # their repository sees a folder, and no repository of ours


def test_an_entry_holds_of_novel_only_the_state_and_the_logs(project):
    run_ticks(project, 2)
    history = History(project)
    names = history.git.text("ls-files").splitlines()
    novel = sorted({n.split("/")[1] for n in names if n.startswith(".novel/")})
    assert novel == ["log", "state.yaml"]
    assert not any(n.startswith(".novel/history.git") for n in names)
    for log in (project.novel_dir / "log").iterdir():   # the logs gone by hand: an entry says so
        log.unlink()
    (project.novel_dir / "log").rmdir()
    made = history.record_pending()
    assert made is not None and made.kind == "hand"
    left = history.git.text("ls-files").splitlines()
    assert not any(n.startswith(".novel/log/") for n in left) and ".novel/state.yaml" in left


def test_describe_says_what_an_entry_changed():
    assert describe(["memory/facts.yaml", "memory/loops/a.yaml", "plans/plan_007.yaml",
                     "scenes/scene_007.md", "summaries/checkpoint_010.md",
                     ".novel/state.yaml", "steer.md"]) == \
        "plan 7, scene 7, checkpoint_010, steer.md, memory ×2"
    assert describe([".novel/state.yaml"]) == "state"


def test_without_git_ticks_go_on_and_the_history_says_it_is_off(project, cli, monkeypatch):
    monkeypatch.setattr("novel_agent.history.git.git_executable", lambda: None)
    cli("tick", "-n", "2", "-p", "harbour")
    assert project.tick() == 2 and not (project.novel_dir / "history.git").exists()
    assert "branch      off (git is not on PATH)" in cli("status", "-p", "harbour").output
    refused = cli("rewind", "1", "-p", "harbour", ok=False)
    assert refused.exit_code == 1
    assert "Error: rewinding needs the `git` executable, which is not on PATH" in refused.output


def test_an_edit_by_hand_is_staged_once(project, monkeypatch):
    """record_pending stages the files, then makes its entry of that very tree."""
    from novel_agent.history.git import Git
    run_ticks(project, 1)
    (project.root / "steer.md").write_text("Rain all day.\n")
    calls: list[str] = []
    real = Git.run
    monkeypatch.setattr(Git, "run", lambda self, *a, **k: calls.append(a[0]) or real(self, *a, **k))
    entry = History(project).record_pending()
    assert entry is not None and entry.subject == "edited by hand: steer.md"
    assert calls.count("write-tree") == 1 and calls.count("commit-tree") == 1


def test_the_history_index_is_split_and_an_older_history_is_split_at_its_next_entry(project):
    """An entry rewrites a small index of what changed, not one of every file (the shared
    one, of the rest, is written now and then, the one before it removed); a history
    made before that is split by the next command that records in it."""
    run_ticks(project, 3)
    git_dir = project.novel_dir / "history.git"

    def split() -> bool:           # a split index links to its shared one ("link" extension)
        return b"link" in (git_dir / "index").read_bytes()

    shared = [p for p in git_dir.iterdir() if p.name.startswith("sharedindex.")]
    assert len(shared) == 1 and split()
    git = ["git", f"--git-dir={git_dir}"]
    subprocess.run([*git, "config", "--unset", "core.splitIndex"], check=True)
    subprocess.run([*git, "config", "--unset", "splitIndex.sharedIndexExpire"], check=True)
    subprocess.run([*git, "update-index", "--no-split-index"], cwd=project.root, check=True)
    assert not split()
    run_ticks(project, 1)
    config = subprocess.run([*git, "config", "--get", "core.splitIndex"],
                            capture_output=True, text=True).stdout.strip()
    assert config == "true" and split()
    status = subprocess.run([*git, "status", "--porcelain"], cwd=project.root,
                            capture_output=True, text=True, check=True).stdout
    assert status == ""


def test_the_daemons_log_and_the_exports_are_no_entry_of_the_story(project, cli):
    cli("run", "-p", "harbour", "--ticks", "2", "-q")
    cli("export", "-p", "harbour")
    cli("status", "-p", "harbour")
    history = History(project)
    subjects = [e.subject for e in history.entries()]
    assert not [s for s in subjects if "daemon.log" in s or "export/" in s], subjects
    tracked = history.git.text("ls-files").splitlines()
    assert not [p for p in tracked if "daemon.log" in p or p.startswith("export/")]
    # a history that recorded them (before) forgets them at its next entry
    (project.root / "export" / "old.md").write_text("an old export\n")
    history.git.run("add", "-f", "--", "export/old.md", ".novel/log/daemon.log")
    history.git.run("commit", "-q", "-m", "as an older version recorded them")
    run_ticks(project, 1)
    tracked = history.git.text("ls-files").splitlines()
    assert not [p for p in tracked if "daemon.log" in p or p.startswith("export/")], tracked


def test_the_pages_daemon_output_is_no_entry_of_the_story(project, cli):
    """novel serve's Live page writes its `novel run`'s output to .novel/log/serve_run.out
    (why a start failed is its last line): the daemon's, as its log is. Recorded, it was an
    'edited by hand' entry, and a switch to a branch without it took it away."""
    run_ticks(project, 3)
    out = run_output(project)
    out.write_text("novel run: 2 ticks\n")
    cli("branch", "new", "whatif", "--at", "2", "-p", "harbour")
    out.write_text("novel run: 2 ticks\nnovel run: stopped at once\n")
    cli("branch", "switch", "main", "-p", "harbour")
    cli("rewind", "2", "-p", "harbour")
    assert out.read_text() == "novel run: 2 ticks\nnovel run: stopped at once\n"
    history = History(project)
    for rev in ("main", "whatif"):
        assert not [e.subject for e in history.entries(rev=rev) if "serve_run" in e.subject]
    assert "serve_run.out" not in history.git.text("ls-files")
    # a history that recorded it (before) forgets it at its next entry
    history.git.run("add", "-f", "--", ".novel/log/serve_run.out")
    history.git.run("commit", "-q", "-m", "as an older version recorded it")
    run_ticks(project, 1)
    assert "serve_run.out" not in history.git.text("ls-files")
