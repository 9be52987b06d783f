"""A story server: an OpenAI-compatible test server's responder that answers like the
offline model (or a kind of one: stress_model.py, reading_model.py), from the
project's files, through the real openai SDK.

    with FakeOpenAIServer(StoryServer(project, model=ReadingModel())) as server:
        ...   # a project on the openai provider with llm.base_url = server.base_url

What it tells its model of the story (the request's view) is read from the project's
files at each request, the plan it gave is remembered for the writer and the extractor,
and the prose is read back from the extractor's prompt. A scene or summary longer than
the request's max_tokens is cut there with finish_reason "length", as a real server
does, and a request to continue gets the rest. An outline call (a revision at a
checkpoint among them) is answered by the offline model's outline, its level and size
read from the call's schema (`outline_job`). Used by bench/server_run.py,
bench/long_run.py and the suite.
"""

from __future__ import annotations

import re
import time
from dataclasses import asdict

from novel_agent.history.seen import SeenFiles
from novel_agent.models.base import Request, StoryView
from novel_agent.models.offline import OfflineModel
from novel_agent.story.decisions import plan_from_json
from novel_agent.story.faithfulness import range_items
from novel_agent.story.memory.kept import KeptMemory, item_files
from novel_agent.story.memory.read import FOLDERS
from novel_agent.story.memory.store import Memory
from novel_agent.story.project.folder import Project
from novel_agent.story.scenes import load_scenes
from novel_agent.text.lenient_json import parse_json
from novel_agent.text.vocabulary import load_encoding
from novel_agent.tick.stages.summarize import SummaryJob

ENCODING = load_encoding("cl100k_base")
STAGE_WORDS = (("You are the architect of a novel", "outline"),
               ("You condense part of a novel", "summarizer"),
               ("record what it establishes", "extractor"), ("You are the planner", "planner"))


class StoryServer:
    """A responder that answers like the offline model, from the project's files."""

    def __init__(self, project: Project, model: OfflineModel | None = None):
        """`model`: an OfflineModel (or a kind of one, stress_model.py) to answer with."""
        self.project = project
        self.story, self.tick, self.memory = None, 0, Memory()   # as the files hold them
        self.model = model or OfflineModel(seed=0)
        self.plan = None
        self.prose = ""                     # the last scene the extractor was sent
        self.rest: dict[str, str] = {}      # what a cut-off answer had still to say
        # what the files say is read again only when they moved, and then only the files
        # that did (the kernel names them, as for a session's history): a real server's
        # answer does not cost more as the project grows, and neither should this one's
        self.seen = SeenFiles(project.root, time.time_ns)
        self.kept = KeptMemory(project.memory_dir)
        self.read_at: int | None = None     # the look the files were last read at

    def stage(self, body: dict) -> str:
        system = body["messages"][0]["content"]
        return next((stage for word, stage in STAGE_WORDS if word in system), "writer")

    def __call__(self, body: dict) -> str | dict:
        stage = self.stage(body)
        max_tokens = body.get("max_tokens") or 600
        if "cut off by the length limit" in body["messages"][-1]["content"]:
            return self.cut(stage, self.rest.pop(stage, ""), max_tokens)   # the rest of it
        self.read_files()
        prose, job = self.prose, {}
        if stage == "extractor":
            user = body["messages"][-1]["content"]
            found = re.search(r"^## Scene \d+\n(.*?)(?:\n+Extract what scene \d+|\Z)", user,
                              re.S | re.M)       # the scene, not the request after it
            prose = self.prose = found.group(1) if found else user
        if stage == "summarizer":
            job = asdict(self.summary_job(body["messages"][-1]["content"]))
        schema = (body.get("response_format") or {}).get("json_schema", {}).get("schema")
        if stage == "outline":
            job = outline_job(schema or {}, body["messages"][-1]["content"])
        view = StoryView(story=self.story, memory=self.memory, tick=self.tick, plan=self.plan,
                         prose=prose, job=job)
        request = Request(stage, body["messages"], max_tokens, schema, view=view)
        text = self.model.complete(request).text
        if stage == "planner":
            self.plan = plan_from_json(parse_json(text), max_tools=5)
        return self.cut(stage, text, max_tokens) if stage in ("writer", "summarizer") \
            else text

    def read_files(self) -> None:
        """The story, the tick and the memory as the files hold them now."""
        self.seen.look()
        moved, self.read_at = self.seen.moved_since(self.read_at), self.seen.looks
        if moved == set() and self.story is not None:
            return
        seen = self.seen.folders_now(f"memory/{kind}/" for kind in FOLDERS)
        work, files = self.kept.read(given=seen and {
            kind: seen[f"memory/{kind}/"] for kind in FOLDERS},
            moved=None if moved is None else item_files(moved))
        self.kept.landed(work)        # nothing here changes it: the files hold it
        self.story, self.tick, self.memory = self.project.story(), self.project.tick() + 1, files

    def close(self) -> None:
        self.seen.close()

    def cut(self, stage: str, text: str, max_tokens: int) -> str | dict:
        """`text` cut at `max_tokens` with finish_reason length, as a real server does;
        the rest is kept for the request that asks to continue."""
        tokens = ENCODING.encode(text)
        if len(tokens) <= max_tokens:
            return text
        self.rest[stage] = ENCODING.decode(tokens[max_tokens:])
        return {"content": ENCODING.decode(tokens[:max_tokens]), "finish_reason": "length"}

    def summary_job(self, user: str) -> SummaryJob:
        """What the summarizer is asked, read from its prompt as a real model would."""
        found = re.search(r"scenes (\d+) to (\d+)", user)
        first, last = (int(found.group(1)), int(found.group(2))) if found else (1, 1)
        kind = ("overall" if 'Rewrite "Summary so far"' in user else
                "arc" if "Condense the summaries" in user else "checkpoint")
        previous = re.search(r"^## Summary so far\n(.*?)(?=^## |\Z)", user, re.S | re.M)
        blocks = re.findall(r"^### Scenes [^\n]*\n(.*?)(?=^### |^## |\Z)", user, re.S | re.M)
        scenes = load_scenes(self.project.scenes_dir, list(range(first, last + 1)))
        items = [(i.kind, i.label) for i in range_items(self.memory, scenes, first, last)]
        return SummaryJob(kind, first, last, items if kind != "overall" else [],
                          previous.group(1).strip() if previous else "", blocks)


def outline_job(schema: dict, user: str) -> dict:
    """What an outline call asks for, read from its answer's schema as a real model would
    (the level, how many parts) and its prompt (the chapters' numbers it names): for the
    offline model's outline_answer. A revision at a checkpoint is the schema of chapters
    with their beats."""
    props = schema.get("properties", {})
    level = next((k for k in ("acts", "chapters", "beats") if k in props), "arc")
    items = props.get(level, {})
    count = int(items.get("maxItems") or 1)
    said = [int(n) for n in re.findall(r"\bchapters? (\d+)", user)]
    total = max(said, default=count)
    if level == "chapters" and "beats" in items.get("items", {}).get("properties", {}):
        most = int(items["items"]["properties"]["beats"].get("maxItems") or 1)
        numbers = asked_numbers(user) or list(range(1, count + 1))
        return {"level": "revise", "rewrite": True, "count": count, "numbers": numbers,
                "beats": [most] * count, "total": max(total, *numbers), "threads": []}
    job = {"level": level, "count": count, "total": total}
    if level == "beats":
        job["chapter"] = said[-1] if said else 1
    return job


def asked_numbers(user: str) -> list[int]:
    """The chapters a revision asks for, as its prompt names them ("write chapters 5 to 8
    anew", "chapters 5, 7 and 8", "chapter 5"): tick/stages/outline.py's numbers_text."""
    found = re.search(r"write chapters? (\d+(?:(?:, | and | to )\d+)*) anew", user)
    if not found:
        return []
    said = [int(n) for n in re.findall(r"\d+", found.group(1))]
    return list(range(said[0], said[-1] + 1)) if " to " in found.group(1) else said
