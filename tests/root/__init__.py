"""Tests of novel_agent's root modules (files, crashpoints: the crash matrix) and the layers
themselves."""
