"""The stages of a tick: plan, tools, write, extract, commit (and summarize)."""
