"""Tests of novel_agent/story/: the project, its lock, scenes, memory, lore, the steer note,
summaries, decisions."""
