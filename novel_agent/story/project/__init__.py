"""The project folder: its paths, creation, discovery and lock (story/project/folder.py),
the state cache (state.py), files that land together (journal.py), bringing a project
back to what its files say (recovery.py), and which of its files are damaged (damage.py).
"""
