"""`.novel/index.db` and what reads it: the database, its sync with the files, search documents,
BM25 search, embeddings, the usage ledger, recall. Imports context/ and below.
"""
