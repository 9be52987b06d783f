"""The continuity audit: what a scene contradicts, with quoted evidence.

findings.py   Finding, ConStory-Bench's subtypes and severities, CED
knowledge.py  the checkable knowledge (alive/dead/absent, where, holds, witnesses,
              the clock) read from and written to the memory files
rules.py      the rule checks of a scene's extraction against that knowledge
llm.py        the LLM auditor's schema, parsing and quote verification
policy.py     off | report | revise | hold: what a tick does with its findings
book.py       `novel audit`: the book replayed scene by scene, and its CED

Layer: above story/, below models/ (it imports only root, text/, config/, story/).
"""
