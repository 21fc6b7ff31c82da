"""Embedding, keyword search and hybrid fusion."""

from .embed import EmbeddingModel, get_embedder
from .retriever import Retriever, SearchTrace

__all__ = ["EmbeddingModel", "Retriever", "SearchTrace", "get_embedder"]
