"""Books in and out: the markdown model, export, EPUB, splitting a manuscript, import. Imports
tick/ and below.
"""
