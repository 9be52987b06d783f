"""Revision: the book's history (a git repository of its own under `.novel/`), rewind,
redo, branches, and doctor's repair of later scenes deleted by hand.

    git.py       the `git` executable, run against `.novel/history.git` only
    history.py   entries: record one per landed tick, import piece, summary, hand edit
    restore.py   move the project's files to an entry, in one journaled transaction
    rewind.py    `novel rewind N`, `--undo`, and redo's first half
    branches.py  `novel branch list|new|switch|delete`
    repair.py    `novel doctor --fix` for scenes deleted by hand
"""
