CREATE TABLE classes (
    id TEXT PRIMARY KEY,
    tenant TEXT NOT NULL,
    course TEXT NOT NULL,
    title TEXT NOT NULL,
    slides_document_id TEXT,
    started DOUBLE PRECISION NOT NULL,
    ended DOUBLE PRECISION,
    slide_page INTEGER,
    slide_source TEXT NOT NULL DEFAULT 'tracked',
    slide_changed DOUBLE PRECISION,
    FOREIGN KEY (tenant, course) REFERENCES courses (tenant, id) ON DELETE CASCADE
);

CREATE INDEX classes_by_course ON classes (tenant, course, started);

CREATE TABLE class_events (
    class_id TEXT NOT NULL REFERENCES classes (id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    tenant TEXT NOT NULL,
    course TEXT NOT NULL,
    start_s DOUBLE PRECISION NOT NULL,
    end_s DOUBLE PRECISION NOT NULL,
    text TEXT NOT NULL,
    raw_text TEXT NOT NULL,
    speaker TEXT NOT NULL,
    final INTEGER NOT NULL,
    page INTEGER,
    received DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (class_id, seq)
);
