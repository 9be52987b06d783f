"""Tests of novel_agent/web/: `novel serve`, over HTTP and in a real browser."""
