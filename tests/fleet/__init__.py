"""Tests of novel_agent/fleet/: `novel fleet`, in one process, as a process, and on Temporal."""
