"""One tick: the session, the pipeline, each stage's prompt and its log, and the stages. Imports
index/ and below.
"""
