"""Tests of novel_agent/revision/: revise, re-deriving memory, the doctor's repair."""
