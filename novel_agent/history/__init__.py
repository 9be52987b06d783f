"""The book's history: every landed tick, import piece, summary, revision and hand edit as
one git entry in `.novel/history.git` (the project folder its work tree). Imports story/.

    git.py          the `git` executable, run against `.novel/history.git` only
    store.py        entries: record one per landed tick, import piece, summary, hand edit
    restore.py      move the project's files to an entry, in one journaled transaction
    rewind.py       `novel rewind N`, `--undo`, and redo's first half
    redo.py         `novel redo`'s marker, settled if a kill cut it
    branches.py     `novel branch list|new|switch|delete`
    interrupted.py  a revise a kill cut, settled
    hooks.py        where the tick, the summarizer and opening a project meet the history
"""
