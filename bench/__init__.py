"""The benchmarks. Each runs from the repository's root as a module, `python -m bench.<name>`,
so that it imports novel_agent and what it shares with the tests (tests.support: the test
server, the stress and reading models, the book factories) from the checkout. The documentation's Benchmarks page (docs/benchmarks.md) says what each
one measures and what it printed."""
