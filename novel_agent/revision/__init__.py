"""Revision with propagation: what a revised scene changes is re-derived through the ticks
after it. Above tick/ and books/ (it re-runs the extractor and replays plan records).

    rederive.py  memory from the plan records (tools, cast, extraction), tick by tick
    revise.py    `novel revise N [--file F] [--rewrite-after]`
    repair.py    `novel doctor --fix` for scenes deleted by hand
"""
