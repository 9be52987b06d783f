"""Tests of novel_agent/cli/: the commands as a user meets them (output, errors at the door,
help, the live line)."""
