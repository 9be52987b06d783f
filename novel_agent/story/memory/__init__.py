"""The story's memory: what the scenes have established (story/memory/store.py), read from
its files (read.py), kept between ticks (kept.py), written back (files.py); the records'
fields and their checks (records.py), the indexes that find an item by name (lookup.py),
what an extraction does to it (extraction.py), the characters' voice cards (voices.py).
"""
