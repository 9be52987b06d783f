"""Tests of novel_agent/daemon/: `novel run`, its loop, signals, watching the files."""
