"""`novel run`: the loop, heartbeat, signals, watching files, reloading, the daemon's log. Imports
reports/ and below.
"""
