"""Tests of novel_agent/audit/: the continuity audit's rules, its policy in the tick, the LLM
auditor, `novel audit`."""
