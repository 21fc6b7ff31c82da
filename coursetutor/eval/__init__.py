"""Retrieval evaluation on public datasets."""
