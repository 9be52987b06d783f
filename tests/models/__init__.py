"""Tests of novel_agent/models/: the OpenAI-compatible client, the embedded models, the model
table, `novel models`."""
