"""Tests of novel_agent/context/: the context engine (budgets, items, relevance, retrieval,
templates, `novel context`)."""
