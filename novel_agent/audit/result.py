"""What the continuity audit found and did for one tick (tick/stages/audit.py runs it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from novel_agent.audit.findings import Finding
from novel_agent.models.ask import StageCall
from novel_agent.story.decisions import Extraction


@dataclass
class AuditResult:
    """What the audit found and did for one tick."""

    mode: str
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    discarded: int = 0          # the auditor's findings without a quote from the draft
    revised: bool = False       # the revision was kept: prose and extraction below
    prose: str = ""
    extraction: Extraction | None = None
    held: bool = False
    calls: list[StageCall] = field(default_factory=list)

    def record(self) -> dict[str, Any]:
        """What the plan record keeps of it."""
        out: dict[str, Any] = {"mode": self.mode, "findings": [f.to_dict() for f in self.findings]}
        if self.notes:
            out["notes"] = self.notes
        if self.discarded:
            out["discarded"] = self.discarded
        return out
