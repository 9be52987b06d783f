"""What the tests (and the benches in bench/) share, imported as `tests.support.<module>`
from the repository's root (pytest puts it on sys.path: `pythonpath` in pyproject.toml; a
bench runs as `python -m bench.<name>`). The fixtures every test may ask for (project,
projects_dir, cli, snapshot, ticked, openai_project) are in tests/conftest.py.

Test servers
    fake_openai     FakeOpenAIServer: an OpenAI-compatible server on 127.0.0.1 that the real
                    openai SDK talks to; API_KEY; the `fake_openai` fixture
    responders      answers for it as a story's stages give them: stage_of, story_responder,
                    PROSE, priced (with a usage block, USAGE)
    batching        Batching: the test server as a batching server (K slots, a latency)
    story_server    StoryServer: a responder that answers as the offline model (or a kind of
                    one) from the project's files
    web_server      `novel serve`'s app on a real uvicorn server (serving, make_site) and a
                    client that follows no redirect

Models
    stress_model    StressModel: the offline model as a cheap model behaves on a long run
    reading_model   ReadingModel: the offline model with an extractor that reads the prose
    daemon_script   make: a Daemon on a fake clock (FakeTime) whose ticks follow a script

Books and projects
    projects        HARBOUR (the `project` fixture's story), fresh, files_of, story_files,
                    set_llm
    ticking         run_ticks: n ticks in one session, the model chosen explicitly; NOW
    story_factory   synthetic stories, memory and plans of realistic shape (prose, story,
                    memory, plan, big_memory)
    audit_book      book: a scripted book with planted contradictions and near-miss
                    controls (BookModel, score), for the audit tests and bench/audit.py
    audit_cases     the audit's two-scene book: Tobin drowns (PLAN1, PROSE1, DIES), then
                    BAD or GOOD; extraction, book, configured
    planted         write_planted: a long story with facts planted early and needed late;
                    plant, plan_answer, writer_prompt
    manuscripts     write_book: a manuscript to import (PEOPLE, scene_text)
    long_checks     LongRun: what a long run is judged by, read from each tick's reports

The docs
    doc_examples    a docs page's doc-setup comments and console/sh examples (parse, read,
                    pages), and the shape a shown output line stands for (shape,
                    first_missing)
    doc_runner      run: a page's line in-process or through bash (install_novel puts a
                    `novel` on its PATH); problem: what is wrong with what it printed

Running the CLI
    clirunner       invoke: `novel ARGS` in-process through Click's CliRunner (the `cli`
                    fixture is built on it)
    processes       the `novel` fixture: `novel ARGS` as a real process; until (poll)
    crashes         forked, forked_tick: a command killed at a crash point in a forked
                    child; assert_sound: the book a kill left is whole
    repo            ROOT (the repository), README, DOCS; page, block: a docs page's text,
                    one of its code blocks; hooks: docs/hooks.py
"""
