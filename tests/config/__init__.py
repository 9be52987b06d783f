"""Tests of novel_agent/config/: settings in layers, presets, `novel preset` and `novel config
show`."""
