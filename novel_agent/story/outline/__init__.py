"""The book's outline: its file (story/outline/file.py), where the next scene falls in it
(position.py) and where the book stands (standing.py), the tension curves (curves.py),
the loops' payoffs (payoffs.py), drift at a checkpoint (drift.py), what a model answers
when it makes the outline (answers.py) or revises it (revision.py).
"""
