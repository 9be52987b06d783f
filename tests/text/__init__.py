"""Tests of novel_agent/text/: token counts, names, cleanup of model output."""
