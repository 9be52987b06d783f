"""One tick: the session, the draft its steps hand on (draft.py), the stages' behaviour
found through their declarations (registry.py, config/stages.py), the sequences of
steps (pipeline.py), each stage's prompt and its log, and the stages (stages/). Imports
index/ and below.
"""
