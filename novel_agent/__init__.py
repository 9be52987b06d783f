"""novel_agent: a story daemon that writes a novel one scene per tick."""

__version__ = "0.6.0"
