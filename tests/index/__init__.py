"""Tests of novel_agent/index/: the search index in .novel/index.db."""
