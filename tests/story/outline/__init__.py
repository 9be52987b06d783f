"""Tests of novel_agent/story/outline/: its file, position and standing, curves, payoffs, drift, answers, revision."""
