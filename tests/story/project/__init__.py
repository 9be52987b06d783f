"""Tests of novel_agent/story/project/: the folder and its lock, damage."""
