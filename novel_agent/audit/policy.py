"""What a tick does with its findings: `audit.mode` off | report | revise | hold.

- off: no checks (knowledge is still recorded);
- report: the findings are saved with the tick and shown; the scene lands;
- revise: findings at `audit.act_on` or worse send the draft back to the writer once,
  with the findings listed; the revision is audited again and kept only if no
  finding got worse and at least one got better (`verdict` says which);
- hold: findings at `audit.act_on` or worse stop the tick before its commit; nothing
  lands, the draft and the findings wait in `.novel/held.yaml` for the author.
"""

from __future__ import annotations

from collections.abc import Sequence

from novel_agent.audit.findings import Finding, at_least

MODES = ("off", "report", "revise", "hold")


def acted_on(findings: Sequence[Finding], act_on: str) -> list[Finding]:
    """The findings the policy acts on: those of severity `act_on` or worse."""
    return at_least(findings, act_on)


def revise_request(findings: Sequence[Finding]) -> str:
    """The message that asks the writer for a revision: the findings, one a line."""
    lines = [f"- {f.message}: \"{f.quote}\" contradicts \"{f.against}\"" for f in findings]
    return ("Your scene contradicts what the story has established:\n" + "\n".join(lines)
            + "\nWrite the whole scene again, keeping what works, without these "
              "contradictions. Answer with the prose only.")


def verdict(before: Sequence[Finding], after: Sequence[Finding]) -> tuple[bool, str]:
    """Whether to keep a revision: no kind of finding got worse (more of it, or more
    severe) and at least one got better; and the note that says which."""
    def tally(fs: Sequence[Finding]) -> dict[str, tuple[int, int]]:
        out: dict[str, tuple[int, int]] = {}
        for f in fs:
            n, worst = out.get(f.subtype, (0, -1))
            out[f.subtype] = (n + 1, max(worst, f.rank))
        return out

    old, new = tally(before), tally(after)
    worse = sorted(s for s in new if new[s] > old.get(s, (0, -1)) and
                   (new[s][0] > old.get(s, (0, -1))[0] or new[s][1] > old.get(s, (0, -1))[1]))
    better = sorted(s for s in old if new.get(s, (0, -1)) < old[s] and s not in worse)
    if worse:
        return False, (f"the revision was dropped: {', '.join(worse)} got worse "
                       f"({len(before)} → {len(after)} findings); the first draft stands")
    if not better:
        return False, (f"the revision was dropped: no finding got better ({len(before)} → "
                       f"{len(after)} findings); the first draft stands")
    return True, (f"the revision was kept: {', '.join(better)} got better ({len(before)} → "
                  f"{len(after)} findings)")
