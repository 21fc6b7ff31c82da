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
