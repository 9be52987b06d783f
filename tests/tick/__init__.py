"""Tests of novel_agent/tick/: one tick, its stages and their prompts, offline, through the SDK
and on the local model."""
