"""Bulk loading of a PostgresStore with COPY, writing what `replace_document` writes.

`PostgresStore.replace_document` takes one document per transaction and inserts its chunks one
statement at a time; that is right for ingest and slow for a million chunks. `BulkLoader.load`
writes a batch of new documents in one transaction with binary COPY instead: the same rows in
the same tables and columns (documents, terms, chunks with their term ids and frequencies in
the order the store writes them, vectors, the course's BM25 statistics); postings and
embeddings are made in SQL from those rows as the store makes them (postings per
course/term/document from the chunks' term arrays, embeddings joined from vectors by
`vector_key`). Only the
surrogate keys (`pk`, term ids) may get other values. `canonical` reads a course back without
those keys, so two loads can be compared row for row.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np
import psycopg
from pgvector.psycopg import register_vector

from coursetutor.store import ChunkRow
from coursetutor.types import Document

Batch = Sequence[tuple[Document, Sequence[ChunkRow]]]

_DOCUMENT_COLUMNS = ("pk", "tenant", "course", "id", "title", "doc_type", "topic",
                     "difficulty", "language", "source_name", "content_hash", "pages",
                     "media_url")
_DOCUMENT_TYPES = ("int4", *["text"] * 6, "int4", "text", "text", "text", "int4", "text")
_CHUNK_COLUMNS = ("pk", "tenant", "course", "document_id", "id", "ordinal", "text",
                  "section_path", "page", "start_s", "end_s", "anchor", "n_tokens", "n_terms",
                  "term_ids", "term_tfs", "vector_key", "cues", "content_hash")
_CHUNK_TYPES = ("int8", "text", "text", "text", "text", "int4", "text", "text", "int4",
                "float8", "float8", "text", "int4", "int4", "int4[]", "float4[]", "text",
                "text", "text")


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


class BulkLoader:
    """Loads new documents into one course of a migrated PostgresStore database."""

    def __init__(self, url: str, tenant: str, course: str, model: str) -> None:
        self.conn = psycopg.connect(url, autocommit=True)
        register_vector(self.conn)
        self.tenant, self.course, self.model = tenant, course, model
        row = self.conn.execute("SELECT pk FROM courses WHERE tenant = %s AND id = %s",
                                (tenant, course)).fetchone()
        if row is None:
            raise ValueError(f"course {course!r} does not exist")
        self.course_pk = int(row[0])
        self.terms: dict[str, int] = {}
        self.conn.execute("CREATE TEMP TABLE vector_stage (key TEXT, dim INTEGER, "
                          "vector vector)")

    def close(self) -> None:
        self.conn.close()

    def load(self, batch: Batch, vectors: dict[str, np.ndarray]) -> int:
        """Store `vectors` (as put_vectors) and the batch's documents (as replace_document,
        for documents not yet in the course); returns the number of chunks stored."""
        with self.conn.transaction():
            self._vectors(vectors)
            ids = self._term_ids({t for _, rows in batch for c in rows for t in c.terms})
            doc_pks = self._next("documents_pk_seq", len(batch))
            self._copy("documents", _DOCUMENT_COLUMNS, _DOCUMENT_TYPES, [
                (pk, d.tenant, d.course, d.id, d.title, d.doc_type, d.topic, d.difficulty,
                 d.language, d.source_name, d.content_hash, d.pages, d.media_url)
                for pk, (d, _) in zip(doc_pks, batch, strict=True)])
            stored = self._chunks(batch, ids)
            if stored:
                self._postings(min(stored), max(stored))
                self._embeddings(min(stored), max(stored))
                # the document frequencies the store keeps with every write (course_terms)
                self.conn.execute(
                    "INSERT INTO course_terms (course_pk, term_id, df) SELECT course_pk, "
                    "term_id, SUM(cardinality(chunk_pks)) FROM postings "
                    "WHERE document_pk = ANY(%s) GROUP BY course_pk, term_id "
                    "ON CONFLICT (course_pk, term_id) DO UPDATE SET df = course_terms.df + "
                    "excluded.df", (list(doc_pks),))
            n = sum(len(rows) for _, rows in batch)
            self.conn.execute(
                "UPDATE courses SET n_chunks = n_chunks + %s, sum_terms = sum_terms + %s, "
                "generation = nextval('course_generation') WHERE pk = %s",
                (n, sum(len(c.terms) for _, rows in batch for c in rows), self.course_pk))
        return n

    def _vectors(self, vectors: dict[str, np.ndarray]) -> None:
        if not vectors:
            return
        self._copy("vector_stage", ("key", "dim", "vector"), ("text", "int4", "vector"),
                   [(k, int(v.shape[0]), np.asarray(v, np.float32))
                    for k, v in sorted(vectors.items())])
        self.conn.execute(
            "INSERT INTO vectors (model, key, dim, vector) SELECT %s, key, dim, vector "
            "FROM vector_stage ON CONFLICT (model, key) DO UPDATE SET dim = excluded.dim, "
            "vector = excluded.vector", (self.model,))
        self.conn.execute("TRUNCATE vector_stage")

    def _term_ids(self, terms: set[str]) -> dict[str, int]:
        new = sorted(terms - self.terms.keys())
        if new:
            self.conn.execute("INSERT INTO terms (term) SELECT unnest(%s::text[]) "
                              "ON CONFLICT DO NOTHING", (new,))
            rows = self.conn.execute("SELECT term, id FROM terms WHERE term = ANY(%s)",
                                     (new,)).fetchall()
            self.terms.update((str(t), int(i)) for t, i in rows)
        return self.terms

    def _next(self, sequence: str, n: int) -> list[int]:
        rows = self.conn.execute("SELECT nextval(%s) FROM generate_series(1, %s)",
                                 (sequence, n)).fetchall()
        return [int(r[0]) for r in rows]

    def _chunks(self, batch: Batch, ids: dict[str, int]) -> list[int]:
        """COPY the chunks; returns their pks."""
        chunk_pks = iter(self._next("chunks_pk_seq", sum(len(rows) for _, rows in batch)))
        chunks: list[tuple[Any, ...]] = []
        for d, rows in batch:
            for c in rows:
                counts = Counter(ids[t] for t in c.terms)
                chunks.append((next(chunk_pks), d.tenant, d.course, d.id, c.id, c.ordinal,
                               c.text, _json(list(c.section_path)), c.locator.page,
                               c.locator.start, c.locator.end, c.locator.anchor, c.n_tokens,
                               len(c.terms), list(counts.keys()),
                               [float(v) for v in counts.values()], c.vector_key,
                               _json(c.cues), c.content_hash))
        self._copy("chunks", _CHUNK_COLUMNS, _CHUNK_TYPES, chunks)
        return [row[0] for row in chunks]

    def _postings(self, lo: int, hi: int) -> None:
        """The postings of the chunks with pks lo..hi, made from their term ids and
        frequencies as replace_document makes them: one row per term and document, the
        chunks in insertion order, each chunk's length its number of terms."""
        self.conn.execute(
            "INSERT INTO postings (course_pk, term_id, document_pk, doc_type, difficulty, "
            "chunk_pks, tfs, lens) SELECT %s, u.term_id, d.pk, d.doc_type, d.difficulty, "
            "array_agg(k.pk ORDER BY k.pk), array_agg(u.tf ORDER BY k.pk), "
            "array_agg(k.n_terms::real ORDER BY k.pk) FROM chunks k JOIN documents d "
            "ON d.tenant = k.tenant AND d.course = k.course AND d.id = k.document_id "
            "CROSS JOIN LATERAL unnest(k.term_ids, k.term_tfs) AS u(term_id, tf) "
            "WHERE k.pk BETWEEN %s AND %s GROUP BY u.term_id, d.pk, d.doc_type, d.difficulty",
            (self.course_pk, lo, hi))

    def _embeddings(self, lo: int, hi: int) -> None:
        """The chunks' vectors per model, joined as replace_document joins them."""
        self.conn.execute(
            "INSERT INTO embeddings (chunk_pk, model, course_pk, doc_type, difficulty, dim, "
            "embedding) SELECT k.pk, v.model, %s, d.doc_type, d.difficulty, v.dim, v.vector "
            "FROM chunks k JOIN vectors v ON v.key = k.vector_key JOIN documents d "
            "ON d.tenant = k.tenant AND d.course = k.course AND d.id = k.document_id "
            "WHERE k.pk BETWEEN %s AND %s", (self.course_pk, lo, hi))

    def _copy(self, table: str, columns: Sequence[str], types: Sequence[str],
              rows: list[tuple[Any, ...]]) -> None:
        with self.conn.cursor() as cur, cur.copy(
            f"COPY {table} ({', '.join(columns)}) FROM STDIN (FORMAT BINARY)"
        ) as copy:
            copy.set_types(list(types))
            for row in rows:
                copy.write_row(row)


# A course read back without surrogate keys: every row by natural keys, in a fixed order.
_CANONICAL = {
    "courses": "SELECT tenant, id, title, language, allow_solutions, n_chunks, sum_terms "
               "FROM courses WHERE tenant = %(t)s AND id = %(c)s",
    "documents": "SELECT tenant, course, id, title, doc_type, topic, difficulty, language, "
                 "source_name, content_hash, pages, media_url FROM documents "
                 "WHERE tenant = %(t)s AND course = %(c)s ORDER BY id",
    "chunks": "SELECT k.document_id, k.id, k.ordinal, k.text, k.section_path, k.page, k.start_s, "
              "k.end_s, k.anchor, k.n_tokens, k.n_terms, "
              "ARRAY(SELECT t.term FROM unnest(k.term_ids) WITH ORDINALITY u(i, o) "
              "JOIN terms t ON t.id = u.i ORDER BY u.o), k.term_tfs, k.vector_key, k.cues, "
              "k.content_hash FROM chunks k WHERE k.tenant = %(t)s AND k.course = %(c)s "
              "ORDER BY k.id",
    "postings": "SELECT t.term, d.id, p.doc_type, p.difficulty, "
                "ARRAY(SELECT k.id FROM unnest(p.chunk_pks) WITH ORDINALITY u(i, o) "
                "JOIN chunks k ON k.pk = u.i ORDER BY u.o), p.tfs, p.lens FROM postings p "
                "JOIN terms t ON t.id = p.term_id JOIN documents d ON d.pk = p.document_pk "
                "JOIN courses c ON c.pk = p.course_pk "
                "WHERE c.tenant = %(t)s AND c.id = %(c)s ORDER BY t.term, d.id",
    "embeddings": "SELECT k.id, e.model, c.id, e.doc_type, e.difficulty, e.dim, "
                  "e.embedding::text FROM embeddings e JOIN chunks k ON k.pk = e.chunk_pk "
                  "JOIN courses c ON c.pk = e.course_pk "
                  "WHERE c.tenant = %(t)s AND c.id = %(c)s ORDER BY k.id, e.model",
    "course_terms": "SELECT t.term, ct.df FROM course_terms ct JOIN terms t ON t.id = ct.term_id "
                    "JOIN courses c ON c.pk = ct.course_pk WHERE c.tenant = %(t)s "
                    "AND c.id = %(c)s ORDER BY t.term",
    "vectors": "SELECT model, key, dim, vector::text FROM vectors ORDER BY model, key",
    "terms": "SELECT term FROM terms ORDER BY term",
}


def canonical(url: str, tenant: str, course: str) -> dict[str, tuple[int, str]]:
    """Per table: (rows, sha256 of the rows) of the course, without surrogate keys."""
    out = {}
    with psycopg.connect(url) as conn:
        for table, sql in _CANONICAL.items():
            rows = conn.execute(sql, {"t": tenant, "c": course}).fetchall()
            digest = hashlib.sha256(repr(rows).encode()).hexdigest()[:16]
            out[table] = (len(rows), digest)
    return out
