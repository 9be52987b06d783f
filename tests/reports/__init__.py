"""Tests of novel_agent/reports/: status, stats, usage, costs and the doctor."""
