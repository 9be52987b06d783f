"""Responders for FakeOpenAIServer that answer as a story's stages would: `stage_of(body)`
tells which stage sent a request, `story_responder` answers each stage of a tick (PROSE for
the writer), `priced` is story_responder with a usage block (USAGE) on every answer, and
`outline_responder` answers the outline's calls as their schema asks."""

from __future__ import annotations

import json
import re

PROSE = ("The lamp room smelled of paraffin. Mara Quill turned the stranger's map toward the "
         "light and found her own stairs drawn on it, and a door she had never seen.")
USAGE = {"prompt_tokens": 1000, "completion_tokens": 100,
         "prompt_tokens_details": {"cached_tokens": 400}}


def stage_of(body) -> str:
    """Which stage sent `body`, told by the opening words of its system prompt (the
    summarizer's names 'the writer' too, so it is asked first)."""
    system = body["messages"][0]["content"]
    if "architect of a novel" in system:
        return "outline"
    if "condense part of a novel" in system:
        return "summarizer"
    if "planner" in system:
        return "planner"
    if "writer" in system:
        return "writer"
    if "record what it establishes" in system:
        return "extractor"
    return "other"


def asked(body, key: str) -> dict:
    """The schema of `key` in the answer `body` asks for ({} when it is not asked for)."""
    spec = (body.get("response_format") or {}).get("json_schema") or {}
    return (spec.get("schema") or {}).get("properties", {}).get(key) or {}


def story_responder(body):
    """A plan that opens a loop and makes a character, PROSE (with a new line after scene 1),
    PROSE again for a summary, and an extraction of three bullets and a fact; in a book
    with an outline, the plan names the current beat and the extraction says it is done,
    at tension 5."""
    stage = stage_of(body)
    if stage == "planner":
        beat = {"beat": asked(body, "beat")["enum"][0]} if asked(body, "beat") else {}
        return json.dumps(beat | {
            "title": "The Drawn Door", "intention": "Mara studies the map and finds a door.",
            "pov": "Mara Quill", "location": "Skerry Light", "characters": ["Mara Quill"],
            "tool_calls": [{"tool": "open_loop", "name": "door",
                            "detail": "what lies behind the drawn door"},
                           {"tool": "create_character", "name": "The Stranger",
                            "detail": "drowned, carried the map"}]})
    if stage == "writer":      # a scene after the first says something new: copies go
        found = re.search(r"Write scene (\d+) now", body["messages"][-1]["content"])
        n = int(found.group(1)) if found else 1
        return PROSE if n == 1 else f"{PROSE} The bell rang {n} times."
    if stage == "summarizer":                  # the prose names all a summary must
        return PROSE
    if stage == "extractor":
        pacing = {"beat_status": "done"} if asked(body, "beat_status") else {}
        if asked(body, "tension"):
            pacing |= {"tension": 5, "tension_reason": "The door will not stay shut."}
        return json.dumps(pacing | {
            "summary": ["Mara studies the map.", "She finds a door drawn on it.",
                        "The door is not in her lighthouse."],
            "facts": ["The map shows a door Mara has never seen"],
            "characters": [{"name": "Mara Quill", "state": "unsettled"}],
            "loops_opened": [], "loops_resolved": [], "relationships": []})
    return "- summary"


def priced(body):
    """The story's answers, each reporting 1,000 prompt tokens (400 cached) and 100 out."""
    return {"content": story_responder(body), "usage": USAGE}


def outline_responder(body):
    """An outline call's answer, as many parts as its schema asks for, each named by its
    number in the book (beats with a tension: 5): "Chapter 3", "Beat 3 of chapter 3"."""
    spec = body["response_format"]["json_schema"]["schema"]
    if "summary" in spec["properties"]:
        return json.dumps({"summary": "Mara follows the drowned man's map to a door.",
                           "ending": "She shuts the door and the sea gives back its dead."})
    (level,) = spec["properties"]
    count = spec["properties"][level]["maxItems"]
    asked = next(line for line in body["messages"][-1]["content"].splitlines()
                 if line.startswith(("Write", "Divide")))
    numbers = [int(n) for n in re.findall(r"\d+", asked.split(" of act")[0])] or [0]
    if level == "acts":
        return json.dumps({"acts": [{"name": f"Act {i}", "summary": f"What act {i} does."}
                                    for i in range(1, count + 1)]})
    if level == "chapters":
        return json.dumps({"chapters": [{"title": f"Chapter {n}", "purpose": f"Chapter {n}'s job."}
                                        for n in range(numbers[0], numbers[0] + count)]})
    chapter = int(re.search(r"of chapter (\d+)", asked).group(1))
    return json.dumps({"beats": [{"what": f"Beat {k} of chapter {chapter} happens.",
                                  "tension": 5} for k in range(1, count + 1)]})
