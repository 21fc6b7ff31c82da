"""Retrieval maths as pure functions over plain data: BM25, vector scores and indexes, fusion.
The modules of this package import nothing else of coursetutor, so the store and the
retrieval layer above it can both use them."""
