"""The story on disk: the project, its journal and recovery, state, scenes, memory and its files,
lore, the steer note, the summary tree, decisions. Imports config/ and text/.
"""
