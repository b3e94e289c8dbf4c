"""Ranking: sparse BM25 scored at index time, fuzzy title matching, query-token correction."""
