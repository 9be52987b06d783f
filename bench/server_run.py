"""A long run through the real openai SDK against the OpenAI-compatible test server.

    .venv/bin/python -m bench.server_run --ticks 300            # 8,192-token window
    .venv/bin/python -m bench.server_run --ticks 300 --keep /tmp/run   # keep the project

The server (tests/support/fake_openai.py, on 127.0.0.1) answers like the offline model:
its story source is read from the project's files at each request, the plan
it gave is remembered for the writer and the extractor, and the prose is read
back from the extractor's prompt. A scene or summary longer than the request's
max_tokens is cut there with finish_reason "length", as a real server does, and
a request to continue gets the rest. The model name is one the model table does not know, so the window is the 8,192-token
default, as for a small local model. Prints each stage's prompt tokens, budget and compaction level at the
last tick, the sections emptied although they had items, and the median
shared-prefix share of consecutive planner and writer prompts.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from novel_agent.story.project.folder import create_project
from novel_agent.story.project.recovery import reconciled
from novel_agent.tick.pipeline import tick
from novel_agent.tick.session import Session
from tests.support.fake_openai import FakeOpenAIServer
from tests.support.story_server import StoryServer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ticks", type=int, default=300)
    parser.add_argument("--keep", type=Path, default=None, help="copy the project here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        project = create_project(Path(folder) / "served", {
            "name": "served", "premise": "A lighthouse keeper finds a drowned man's map.",
            "protagonist": "Mara Quill"},
            config={"llm": {"provider": "openai", "model": "small-local-model"}})
        shares: dict[str, list[float]] = {"planner": [], "writer": []}
        empty, started = 0, time.monotonic()
        story_server = StoryServer(project)
        with FakeOpenAIServer(story_server) as server:
            config = project.config(flags={"llm.base_url": server.base_url})
            with reconciled(project), Session.open(project, config, {"OPENAI_API_KEY": "sk-test"}) as s:
                for _ in range(args.ticks):
                    result = tick(s)
                    for stage in shares:
                        if result.tick > 1:
                            shares[stage].append(result.reports[stage]["prefix_share"])
                    for report in result.reports.values():
                        candidates = {i["section"] for i in report["items"]
                                      if i.get("score") is not None}
                        empty += sum(1 for sec in report["sections"]
                                     if not sec["tokens"] and sec["name"] in candidates)
            requests = len(server.requests)
        story_server.close()
        print(f"{args.ticks} ticks through the test server in {time.monotonic() - started:.0f} s, "
              f"{requests} requests")
        for stage, report in result.reports.items():
            print(f"  {stage:<10} tick {report['tick']}: {report['tokens']:,} of "
                  f"{report['budget']:,} tokens, level {report['compaction_level']}")
        print(f"  sections emptied although they had items: {empty}")
        for stage, values in shares.items():
            print(f"  {stage} prefix shared with the previous prompt: median "
                  f"{statistics.median(values):.0%}, mean {statistics.mean(values):.0%}")
        if args.keep:
            shutil.rmtree(args.keep, ignore_errors=True)
            shutil.copytree(project.root, args.keep)
            print(f"  project kept in {args.keep} (novel context -p {args.keep} --show-prompt)")


if __name__ == "__main__":
    main()
