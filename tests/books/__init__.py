"""Tests of novel_agent/books/: a book in and out (`novel export`, `novel import`, splitting a
manuscript)."""
