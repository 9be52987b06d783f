"""The test suite: one folder per layer of novel_agent (tests/story/ tests novel_agent/story/,
and so on), the fixtures every test may ask for in conftest.py, and the shared helpers in
tests/support/. Run it from the repository's root with `python -m pytest` (or ./scripts/test)."""
