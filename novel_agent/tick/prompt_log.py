"""The prompt log: one JSON file per stage per tick under `.novel/log/`.

Each holds the context report and the messages sent (the messages only for the
last `context.keep_prompt_logs` ticks: each checkpoint's commit strips the ticks that
fell out since the last, keeping of the items left out only the first LEFT_OUT_KEPT and
a count of the rest, so an old log does not grow with the memory; the messages are the
log's last key, so stripping a log `log_text` wrote cuts them off the file and writes
nothing else); the next build of the same stage reads the previous one to measure the
prefix it shares. A log that cannot be read is said so in the report, never taken as a
0% shared prefix.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from novel_agent.files import read_bytes
from novel_agent.story.project.folder import Project
from novel_agent.story.project.journal import Cut

LEFT_OUT_KEPT = 50    # items left out that a stripped report keeps; the rest are counted



def log_path(project: Project, tick: int, stage: str) -> Path:
    """Where the prompt of `stage` at `tick` is logged (`stage` may name a summary too)."""
    return project.log_dir / f"tick_{tick:03d}_{stage}.json"


def previous_messages(project: Project, tick: int,
                      stage: str) -> tuple[list[dict[str, str]] | None, str]:
    """(the messages `stage` sent at the previous tick or None, a warning if its log is
    there but unreadable)."""
    path = log_path(project, tick - 1, stage)
    try:
        data = json.loads(read_bytes(path).decode("utf-8"))
    except FileNotFoundError:
        return None, ""
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return None, f"{path}: unreadable ({exc}); the shared prefix is not measured"
    messages = data.get("messages") if isinstance(data, dict) else None
    if not isinstance(messages, list):
        return None, f"{path}: holds no messages; the shared prefix is not measured"
    return messages, ""


def log_names(project: Project) -> list[str]:
    """The names in the log folder (one listing, for the several ticks a commit asks of)."""
    try:
        return os.listdir(project.log_dir)
    except (FileNotFoundError, NotADirectoryError):
        return []


def tick_logs(project: Project, tick: int, names: list[str] | None = None) -> list[Path]:
    """The log files of `tick`, by name (of `names`, the folder's listing when the caller
    has it; no pattern matching)."""
    prefix = f"tick_{tick:03d}_"
    return [project.log_dir / name for name in sorted(
        log_names(project) if names is None else names)
            if name.startswith(prefix) and name.endswith(".json")]


def stripped_logs(project: Project, tick: int,
                  names: list[str] | None = None) -> dict[Path, str | Cut]:
    """The logs of `tick` without their messages (the reports stay), for the commit that
    makes them older than `context.keep_prompt_logs`: a cut of the file where
    `log_text` put them, else (a log written otherwise) the report written again.
    `names`: the log folder's listing, when the caller has it."""
    out: dict[Path, str | Cut] = {}
    for path in tick_logs(project, tick, names) if tick > 0 else []:
        try:
            raw = read_bytes(path)
            found = _report(raw)
            data = found[0] if found else json.loads(raw)
        except (OSError, UnicodeDecodeError, ValueError):
            continue        # not ours to fix; the report of that tick is already lost
        if not isinstance(data, dict) or (found is None and "messages" not in data):
            continue
        report = stripped(data)
        out[path] = found[1] if found and report == data else \
            json.dumps(report, indent=1, ensure_ascii=False) + "\n"
    return out


MESSAGES = b',\n "messages": '     # how log_text's last key begins
END = "\n}\n"


def _report(raw: bytes) -> tuple[dict[str, Any], Cut] | None:
    """What a log holds besides its messages, and the cut that leaves it so, when the
    messages are its last key at the top level (as `log_text` writes them)."""
    at = raw.rfind(MESSAGES)
    try:
        if at < 0 or list(json.loads(b"{" + raw[at + 1:])) != ["messages"]:
            return None
        report = json.loads(raw[:at] + END.encode())
    except (UnicodeDecodeError, ValueError):
        return None
    return (report, Cut(at, END)) if isinstance(report, dict) and "messages" not in report \
        else None


def tidied_logs(project: Project, tick: int, *, keep: int, kept_at_all: int,
                every: int) -> dict[Path, str | Cut | None]:
    """The housekeeping the commit of `tick` lands with: at a checkpoint (every `every`
    ticks), the logs of the `every` ticks that have fallen `keep` ticks behind since the
    last checkpoint stripped (`stripped_logs`), and those `kept_at_all` ticks behind or
    more removed (`expired_logs`); nothing at the ticks between. A checkpoint's tick does
    the book's batch work already, and a tick between writes its own logs only (three
    cuts, three removes and three more blobs in the history every tick were ~8 ms of a
    tick's 140 at tick 300). So a log keeps its messages `keep` to `keep + every - 1`
    ticks, and is kept `kept_at_all` to `kept_at_all + every - 1` (a log due for both
    is removed). An interval lowered mid-book (10 to 3 at tick 305: 304-306 come next)
    leaves a few ticks' logs unstripped until they are removed with the rest."""
    if every < 1 or tick % every or tick <= keep:
        return {}
    names = log_names(project)
    out: dict[Path, str | Cut | None] = {}
    for at in range(tick - every + 1, tick + 1):
        out.update(stripped_logs(project, at - keep, names))
    out.update(expired_logs(project, tick - kept_at_all, names))
    return out


def expired_logs(project: Project, upto: int,
                 names: list[str] | None = None) -> dict[Path, None]:
    """The logs of every tick up to `upto`, to remove: the commit that makes them older
    than `context.prompt_log_ticks` deletes them, so the folder holds at most that many
    ticks of logs (`novel stats` draws older ticks from state.yaml and the ledger). By the
    folder's listing (`names`, when the caller has it), not by a range of ticks: what a
    checkpoint under another interval left goes too."""
    if upto <= 0:
        return {}
    return dict.fromkeys(project.log_dir / name for name in sorted(
        log_names(project) if names is None else names) if 0 < (log_tick(name) or 0) <= upto)


_LOG_NAME = re.compile(r"^tick_(\d+)_")


def log_tick(name: str) -> int | None:
    """The tick a log file's name gives ("tick_012_writer.json" -> 12); None for a file
    of the folder that is no tick's (daemon.log)."""
    found = _LOG_NAME.match(name)
    return int(found.group(1)) if found else None


def stripped(report: dict[str, Any]) -> dict[str, Any]:
    """`report` without its messages, and with the first LEFT_OUT_KEPT of the items left
    out (every included one stays; `left_out_not_kept` counts the others)."""
    out = {k: v for k, v in report.items() if k != "messages"}
    items = out.get("items")
    if not isinstance(items, list):
        return out
    kept, left = [], 0
    for item in items:
        if isinstance(item, dict) and not item.get("included"):
            left += 1
            if left > LEFT_OUT_KEPT:
                continue
        kept.append(item)
    if left > LEFT_OUT_KEPT:
        out["items"] = kept
        out["left_out_not_kept"] = left - LEFT_OUT_KEPT
    return out


def log_text(report: dict[str, Any], messages: list[dict[str, str]]) -> str:
    """The JSON saved under .novel/log/ for one stage of one tick: the report (the items
    left out capped as in `stripped`, so a log does not grow with the memory; `novel
    context --json` shows them all) and the messages sent."""
    return json.dumps({**capped(report), "messages": messages}, indent=1,
                      ensure_ascii=False) + "\n"


def capped(report: dict[str, Any]) -> dict[str, Any]:
    """`report` with only the first LEFT_OUT_KEPT of its items left out (see stripped)."""
    return {**stripped(report), **({"messages": report["messages"]}
                                   if "messages" in report else {})}
