"""Many books at once: `novel fleet` on one machine, and Temporal for more than one.

gate.py       the shared limit (N requests in flight) and the one pause on a 429
bridge.py     the openai SDK's async client behind the sync client a tick's model uses
scheduler.py  the asyncio scheduler: one tick in flight per book, parking, ceilings
view.py       the fleet's state file, its live view and `novel fleet status`
premises.py   many projects from one file of premises (`novel new --premises`)
temporal.py   the optional extra: one workflow per book, ticks as activities
"""
