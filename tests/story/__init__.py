"""Tests of novel_agent/story/: scenes, lore, the steer note, summaries, decisions, style, the pool of names;
memory/, outline/ and project/ test its subpackages."""
