"""Tests of novel_agent/history/: the book's history, rewind, redo and branches."""
