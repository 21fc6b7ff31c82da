"""The library facade: one store, one embedder and one retriever built from settings."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from .config import Settings
from .ingest import Ingestor, IngestReport, Progress
from .ingest.pipeline import ProgressFn
from .memory import TurnCache, turn_cache
from .retrieval import EmbeddingModel, Retriever, SearchTrace, get_embedder
from .retrieval.retriever import result_cache
from .retrieval.sentence_store import StoredSentences
from .store import Store, store_for
from .store.files import FileStore
from .types import Course, DocType, Document, FileMeta, Hit, SearchFilters

__all__ = ["Progress", "Workspace"]


class Workspace:
    """Everything a command needs for one tenant, built once from settings."""

    def __init__(
        self,
        settings: Settings,
        store: Store | None = None,
        embedder: EmbeddingModel | None = None,
        turns: TurnCache | None = None,
    ) -> None:
        self.settings = settings
        self.tenant = settings.tenant
        self.store = store or store_for(settings)
        self.files = FileStore(settings.files_path)
        # sessions' recent turns: in Redis when it is set, so any process goes on with them
        self.turns = turns or turn_cache(settings)
        self._embedder = embedder
        self._parent: Workspace | None = None
        self.results = result_cache()  # searches per course version (server stores)

    @property
    def embedder(self) -> EmbeddingModel:
        """The embedding model, loaded on first use."""
        if self._embedder is None and self._parent is not None:
            self._embedder = self._parent.embedder
        if self._embedder is None:
            self._embedder = get_embedder(self.settings.embedder, self.settings.embed_threads)
        return self._embedder

    @property
    def sentences(self) -> StoredSentences:
        """This tenant's evidence-sentence vectors, kept in the store."""
        return StoredSentences(self.store, self.tenant, self.embedder.model_id)

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def create_course(self, course: str, title: str = "", language: str = "en") -> Course:
        return self.store.ensure_course(self.tenant, course, title, language)

    def courses(self) -> list[Course]:
        return self.store.list_courses(self.tenant)

    def documents(self, course: str) -> list[Document]:
        return self.store.list_documents(self.tenant, course)

    def remove_course(self, course: str) -> None:
        self.store.remove_course(self.tenant, course)
        self.files.remove_course(self.tenant, course)

    def remove_document(self, course: str, document_id: str) -> None:
        self.store.remove_document(self.tenant, course, document_id)
        self.files.remove_document(self.tenant, course, document_id)

    def for_tenant(self, tenant: str) -> Workspace:
        """A view of this workspace for another tenant, sharing store and embedder."""
        view = Workspace(dataclasses.replace(self.settings, tenant=tenant), self.store,
                         self._embedder, self.turns)
        view._parent = self
        view.results = self.results
        return view

    def ingest(
        self,
        course: str,
        items: list[tuple[Path, FileMeta]],
        progress: ProgressFn | None = None,
    ) -> IngestReport:
        ingestor = Ingestor(self.store, self.embedder, self.settings)
        return ingestor.ingest(self.tenant, course, items, progress)

    def search(
        self,
        query: str,
        course: str,
        k: int = 5,
        mode: str = "hybrid",
        doc_types: tuple[DocType, ...] | None = None,
        max_difficulty: int | None = None,
        trace: SearchTrace | None = None,
        state: tuple[str, int | None] | None = None,
    ) -> list[Hit]:
        """The `k` best passages of the course; `state` as `Retriever.search` takes it."""
        filters = SearchFilters(self.tenant, course, doc_types, max_difficulty)
        retriever = Retriever(self.store, self.embedder, self.settings, self.results)
        return retriever.search(query, filters, k=k, mode=mode, trace=trace, state=state)
