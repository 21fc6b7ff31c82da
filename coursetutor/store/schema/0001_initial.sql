-- The first schema. PostgreSQL's starts with what SQLite reached by migration 0007 and with
-- the two search structures it keeps itself (pgvector embeddings with HNSW, BM25 postings).

-- sqlite:
CREATE TABLE courses (
    tenant TEXT NOT NULL,
    id TEXT NOT NULL,
    title TEXT NOT NULL,
    language TEXT NOT NULL,
    generation INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL DEFAULT (datetime('now')),
    PRIMARY KEY (tenant, id)
);

CREATE TABLE documents (
    tenant TEXT NOT NULL,
    course TEXT NOT NULL,
    id TEXT NOT NULL,
    title TEXT NOT NULL,
    doc_type TEXT NOT NULL,
    topic TEXT NOT NULL,
    difficulty INTEGER NOT NULL,
    language TEXT NOT NULL,
    source_name TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    pages INTEGER NOT NULL,
    updated_at TEXT NOT NULL DEFAULT (datetime('now')),
    PRIMARY KEY (tenant, course, id),
    FOREIGN KEY (tenant, course) REFERENCES courses (tenant, id) ON DELETE CASCADE
);

CREATE TABLE terms (
    id INTEGER PRIMARY KEY,
    term TEXT NOT NULL UNIQUE
);

CREATE TABLE chunks (
    pk INTEGER PRIMARY KEY,
    tenant TEXT NOT NULL,
    course TEXT NOT NULL,
    document_id TEXT NOT NULL,
    id TEXT NOT NULL,
    ordinal INTEGER NOT NULL,
    text TEXT NOT NULL,
    section_path TEXT NOT NULL,
    page INTEGER,
    start_s REAL,
    end_s REAL,
    anchor TEXT,
    n_tokens INTEGER NOT NULL,
    n_terms INTEGER NOT NULL,
    term_ids BLOB NOT NULL,
    term_tfs BLOB NOT NULL,
    vector_key TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    UNIQUE (tenant, course, id),
    FOREIGN KEY (tenant, course, document_id)
        REFERENCES documents (tenant, course, id) ON DELETE CASCADE
);
CREATE INDEX chunks_document ON chunks (tenant, course, document_id);

CREATE TABLE vectors (
    model TEXT NOT NULL,
    key TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (model, key)
);

-- postgres:
-- The PostgreSQL store's schema: the SQLite store's tables, plus the two search structures
-- PostgreSQL keeps itself (pgvector embeddings with HNSW, BM25 postings per document).
CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE tenants (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    created DOUBLE PRECISION NOT NULL
);
INSERT INTO tenants (id, name, created) VALUES ('default', 'default', 0);

CREATE TABLE courses (
    pk SERIAL UNIQUE,
    tenant TEXT NOT NULL,
    id TEXT NOT NULL,
    title TEXT NOT NULL,
    language TEXT NOT NULL,
    allow_solutions INTEGER NOT NULL DEFAULT 0,
    n_chunks INTEGER NOT NULL DEFAULT 0,  -- BM25 statistics of the course
    sum_terms BIGINT NOT NULL DEFAULT 0,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant, id)
);

CREATE TABLE documents (
    pk SERIAL UNIQUE,
    tenant TEXT NOT NULL,
    course TEXT NOT NULL,
    id TEXT NOT NULL,
    title TEXT NOT NULL,
    doc_type TEXT NOT NULL,
    topic TEXT NOT NULL,
    difficulty INTEGER NOT NULL,
    language TEXT NOT NULL,
    source_name TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    pages INTEGER NOT NULL,
    media_url TEXT NOT NULL DEFAULT '',
    updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant, course, id),
    FOREIGN KEY (tenant, course) REFERENCES courses (tenant, id) ON DELETE CASCADE
);

CREATE TABLE terms (
    id SERIAL PRIMARY KEY,
    term TEXT NOT NULL UNIQUE
);

CREATE TABLE chunks (
    pk BIGSERIAL PRIMARY KEY,
    tenant TEXT NOT NULL,
    course TEXT NOT NULL,
    document_id TEXT NOT NULL,
    id TEXT NOT NULL,
    ordinal INTEGER NOT NULL,
    text TEXT NOT NULL,
    section_path TEXT NOT NULL,
    page INTEGER,
    start_s DOUBLE PRECISION,
    end_s DOUBLE PRECISION,
    anchor TEXT,
    n_tokens INTEGER NOT NULL,
    n_terms INTEGER NOT NULL,
    term_ids INTEGER[] NOT NULL,
    term_tfs REAL[] NOT NULL,
    vector_key TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    cues TEXT NOT NULL DEFAULT '[]',
    UNIQUE (tenant, course, id),
    FOREIGN KEY (tenant, course, document_id)
        REFERENCES documents (tenant, course, id) ON DELETE CASCADE
);
CREATE INDEX chunks_document ON chunks (tenant, course, document_id);
CREATE INDEX chunks_vector_key ON chunks (vector_key);

-- BM25 postings: one row per (course, term, document) holding that document's chunks with the
-- term, their term frequencies and lengths. Document-level filters (type, difficulty) sit on
-- the row, so a query reads only the lists of its own terms in its own course.
CREATE TABLE postings (
    course_pk INTEGER NOT NULL,
    term_id INTEGER NOT NULL,
    document_pk INTEGER NOT NULL REFERENCES documents (pk) ON DELETE CASCADE,
    doc_type TEXT NOT NULL,
    difficulty INTEGER NOT NULL,
    chunk_pks BIGINT[] NOT NULL,
    tfs REAL[] NOT NULL,
    lens REAL[] NOT NULL,
    PRIMARY KEY (course_pk, term_id, document_pk)
);
CREATE INDEX postings_document ON postings (document_pk);

-- the embedding cache, keyed by model and text hash (re-ingesting embeds nothing)
CREATE TABLE vectors (
    model TEXT NOT NULL,
    key TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vector vector NOT NULL,
    PRIMARY KEY (model, key)
);

-- each chunk's vector per model, with the course and filter columns beside it, searched
-- through an HNSW index per dimension (a partial expression index: `embedding::vector(N)`)
CREATE TABLE embeddings (
    chunk_pk BIGINT NOT NULL REFERENCES chunks (pk) ON DELETE CASCADE,
    model TEXT NOT NULL,
    course_pk INTEGER NOT NULL,
    doc_type TEXT NOT NULL,
    difficulty INTEGER NOT NULL,
    dim INTEGER NOT NULL,
    embedding vector NOT NULL,
    PRIMARY KEY (chunk_pk, model)
);
CREATE INDEX embeddings_course ON embeddings (course_pk, model);
CREATE INDEX embeddings_hnsw_384 ON embeddings
    USING hnsw ((embedding::vector(384)) vector_cosine_ops) WHERE dim = 384;

CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    tenant TEXT NOT NULL,
    course TEXT NOT NULL,
    student TEXT NOT NULL,
    created DOUBLE PRECISION NOT NULL,
    updated DOUBLE PRECISION NOT NULL,
    ended DOUBLE PRECISION,
    FOREIGN KEY (tenant, course) REFERENCES courses (tenant, id) ON DELETE CASCADE
);
CREATE INDEX sessions_by_student ON sessions (tenant, course, student, updated);

CREATE TABLE turns (
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    ordinal INTEGER NOT NULL,
    tenant TEXT NOT NULL,
    course TEXT NOT NULL,
    student TEXT NOT NULL,
    question TEXT NOT NULL,
    answer TEXT NOT NULL,
    category TEXT NOT NULL,
    intent TEXT NOT NULL,
    grade TEXT NOT NULL,
    level TEXT NOT NULL,
    exercise_key TEXT NOT NULL,
    complete INTEGER NOT NULL,
    sources TEXT NOT NULL,
    created DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (session_id, ordinal)
);
CREATE INDEX turns_by_exercise ON turns (tenant, course, student, exercise_key);
CREATE INDEX turns_by_course ON turns (tenant, course, created);

CREATE TABLE api_keys (
    id TEXT PRIMARY KEY,
    tenant TEXT NOT NULL,
    role TEXT NOT NULL,
    student TEXT NOT NULL,
    name TEXT NOT NULL,
    secret_hash TEXT NOT NULL,
    created DOUBLE PRECISION NOT NULL,
    revoked DOUBLE PRECISION
);
CREATE INDEX api_keys_by_tenant ON api_keys (tenant, created);

CREATE TABLE enrollments (
    tenant TEXT NOT NULL,
    course TEXT NOT NULL,
    student TEXT NOT NULL,
    created DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (tenant, course, student),
    FOREIGN KEY (tenant, course) REFERENCES courses (tenant, id) ON DELETE CASCADE
);
CREATE INDEX enrollments_by_student ON enrollments (tenant, student);

CREATE TABLE jobs (
    id TEXT PRIMARY KEY,
    tenant TEXT NOT NULL,
    course TEXT NOT NULL,
    status TEXT NOT NULL,
    files_total INTEGER NOT NULL,
    files_done INTEGER NOT NULL,
    stage TEXT NOT NULL,
    current TEXT NOT NULL,
    embedded INTEGER NOT NULL,
    to_embed INTEGER NOT NULL,
    report TEXT,
    error TEXT NOT NULL,
    created DOUBLE PRECISION NOT NULL,
    updated DOUBLE PRECISION NOT NULL
);
CREATE INDEX jobs_by_course ON jobs (tenant, course, created);
