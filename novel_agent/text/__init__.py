"""Text: names, model-output cleanup, lenient JSON, tokens and vocabularies. Imports only the root
modules (errors, files, paths).
"""
