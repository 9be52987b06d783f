"""The benches in bench/ that reach into the tick's steps still run (`python -m bench.<name>`)."""
