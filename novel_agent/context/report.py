"""The report of a context build: what went in, what was left out, and why.

`build_report` turns a fitted prompt into a plain dict (saved as JSON per
stage per tick under `.novel/log/`); `render_report` draws it as the table
`novel context` prints. `prefix_share` measures how much of a prompt a
provider's prompt cache can reuse from the same stage's previous prompt.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from novel_agent.config.budget import Budget
from novel_agent.context.engine import Fitted
from novel_agent.text.tokens import TokenCounter

BAR_WIDTH = 50
SECTION_MARKS = {"bible": "B", "tier3": "3", "cast": "C", "retrieved": "R", "settled": "E",
                 "recent_summaries": "2", "recent_full": "1", "tools": "T", "intention": "I",
                 "steer": "S", "overall": "O", "characters": "C", "locations": "L",
                 "relationships": "r", "loops": "o", "recent": "2", "plan": "P", "scene": "1",
                 "previous": "O", "scenes": "1", "instructions": "#", "lore": "K", "now": "N",
                 "facts": "F", "names": "n", "people": "C", "arc": "A", "acts": "a",
                 "story": "O", "chapters": "c", "outline": "W", "beat": "b",
                 "drift": "d", "voices": "V", "style": "Y",
                 "avoid": "X"}   # every stage's: a test checks


def flatten(messages: Sequence[dict[str, str]]) -> str:
    """A prompt as one string, the way a prefix cache sees it (role, then content)."""
    return "".join(f"<|{m.get('role', '')}|>{m.get('content', '')}" for m in messages)


def prefix_share(messages: Sequence[dict[str, str]], previous: Sequence[dict[str, str]] | None,
                 counter: TokenCounter) -> tuple[int, float]:
    """(tokens shared with `previous` as an exact prefix, their share of this prompt)."""
    if not previous:
        return 0, 0.0
    now, before = flatten(messages), flatten(previous)
    n = 0
    limit = min(len(now), len(before))
    step = 4096
    while n < limit and now[n:n + step] == before[n:n + step]:
        n += step
    n = min(n, limit)
    while n > 0 and now[:n] != before[:n]:
        n -= 1
    while n < limit and now[n] == before[n]:
        n += 1
    total = counter.count(now)
    shared = counter.count(now[:n]) if n else 0
    return shared, (shared / total if total else 0.0)


def build_report(fitted: Fitted, budget: Budget, counter: TokenCounter, *, tick: int,
                 previous: Sequence[dict[str, str]] | None = None,
                 warnings: Sequence[str] = ()) -> dict[str, Any]:
    """The report of one build, as plain data."""
    shared, share = prefix_share(fitted.messages, previous, counter)
    system = next((m["content"] for m in fitted.messages if m["role"] == "system"), "")
    sections = [{"name": "instructions", "title": "Instructions", "pinned": True,
                 "tokens": counter.count(system) if system else 0, "items": []}]
    for s in fitted.context.sections:
        sections.append({"name": s.name, "title": s.title, "pinned": s.pinned,
                         "tokens": counter.count(s.text) if s.text else 0,
                         "items": list(s.items)})
    return {
        "stage": fitted.context.stage,
        "tick": tick,
        "model": budget.model,
        "encoding": counter.encoding_name,
        "window": budget.window,
        "max_prompt_tokens": budget.cap,
        "max_output": budget.max_output,
        "margin": budget.margin,
        "budget": budget.tokens,
        "tokens": fitted.tokens,
        "usage": round(fitted.tokens / budget.tokens, 4) if budget.tokens > 0 else 1.0,
        "compaction_level": fitted.level,
        "truncated": list(fitted.truncated),
        "dropped": list(fitted.dropped),
        "prefix_tokens": shared,
        "prefix_share": round(share, 4),
        "sections": sections,
        "items": [{"key": n.key, "section": n.section, "tokens": n.tokens,
                   "included": n.included, "reason": n.reason, "score": n.score,
                   "form": n.form} for n in fitted.notes],
        "state": dict(fitted.state),
        "events": list(fitted.events),
        "warnings": [w for w in [budget.warning, *warnings] if w],
    }


def _bar(report: dict[str, Any]) -> str:
    budget = max(report["budget"], 1)
    cells = []
    for s in report["sections"]:
        if s["tokens"]:
            width = max(1, round(BAR_WIDTH * s["tokens"] / budget))
            cells.append(SECTION_MARKS.get(s["name"], "?") * width)
    bar = "".join(cells)[:BAR_WIDTH]
    return "[" + bar + "·" * (BAR_WIDTH - len(bar)) + "]"


def _recall_lines(recall: dict[str, Any] | None) -> list[str]:
    """The recall probe: how many of the facts relevant to the scene reached the prompt."""
    if not recall or not recall.get("relevant"):
        return [] if recall is None else ["recall  no known fact is about this scene yet"]
    lines = [f"recall  {recall['reached']} of {recall['relevant']} facts relevant to this scene "
             f"reached the prompt ({recall['share']:.0%})"]
    lines += [f"        not reached: {fact}" for fact in recall.get("missed", [])[:3]]
    return lines


def _why_leaner(item: dict[str, Any]) -> str:
    """Why an item is shown leaner: its score when it was chosen by one, else the reason
    (a recent scene compacted, a tier-3 summary told in short: neither is scored)."""
    score = item.get("score")
    return f"score {score:.2f}" if score is not None else item["reason"]


def render_report(report: dict[str, Any], *, items: bool = True) -> list[str]:
    """The report as lines of a readable table."""
    r = report
    lines = [
        f"{r['stage']} context for tick {r['tick']} — model {r['model']} ({r['encoding']})",
        f"budget  {r['budget']:,} tokens = min(window {r['window']:,}, cap "
        f"{r['max_prompt_tokens']:,}) - output {r['max_output']:,} - margin {r['margin']:,}",
        f"used    {r['tokens']:,} tokens ({r['usage']:.0%})   compaction level "
        f"{r['compaction_level']}   prefix shared with last prompt: "
        f"{r['prefix_share']:.0%} ({r['prefix_tokens']:,} tokens)",
        _bar(r),
        *_recall_lines(r.get("recall")),
        "",
        f"  {'section':<18}{'tokens':>8}  {'share':>6}  items",
    ]
    for s in r["sections"]:
        if not s["tokens"]:
            continue
        mark = SECTION_MARKS.get(s["name"], "?")
        share = s["tokens"] / max(r["budget"], 1)
        pinned = " (pinned)" if s["pinned"] else ""
        shown = ", ".join(s["items"][:6]) + (" …" if len(s["items"]) > 6 else "")
        lines.append(f"{mark} {s['name']:<18}{s['tokens']:>8,}  {share:>6.1%}  {shown}{pinned}")
    if r["truncated"]:
        lines.append(f"truncated middle-out: {', '.join(r['truncated'])}")
    left = [i for i in r["items"] if not i["included"]]
    if items and left:
        lines.append("")
        lines.append("left out:")
        for item in left[:20]:
            size = f" ({item['tokens']:,} tokens)" if item["tokens"] else ""
            score = f" score {item['score']:.2f}" if item.get("score") is not None else ""
            lines.append(f"  {item['key']}{size}{score}: {item['reason']}")
        if len(left) > 20:
            lines.append(f"  … {len(left) - 20} more")
    leaner = [i for i in r["items"] if i["included"] and i.get("form") not in (None, "", "full")]
    if items and leaner:
        lines.append("")
        lines.append("shown leaner:")
        for item in leaner[:10]:
            lines.append(f"  {item['key']}: as its {item['form']} ({_why_leaner(item)})")
        if len(leaner) > 10:
            lines.append(f"  … {len(leaner) - 10} more")
    for event in r.get("events", []):
        lines.append(f"note: {event}")
    for warning in r["warnings"]:
        lines.append(f"warning: {warning}")
    return lines
