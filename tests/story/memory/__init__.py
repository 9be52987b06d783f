"""Tests of novel_agent/story/memory/: the records, reading, keeping, writing back, the indexes, voice cards."""
