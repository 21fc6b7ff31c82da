CREATE TABLE classes (
    id TEXT PRIMARY KEY,
    tenant TEXT NOT NULL,
    course TEXT NOT NULL,
    title TEXT NOT NULL,
    slides_document_id TEXT,
    started REAL NOT NULL,
    ended REAL,
    slide_page INTEGER,
    slide_source TEXT NOT NULL DEFAULT 'tracked',
    slide_changed REAL,
    FOREIGN KEY (tenant, course) REFERENCES courses (tenant, id) ON DELETE CASCADE
);

CREATE INDEX classes_by_course ON classes (tenant, course, started);

CREATE TABLE class_events (
    class_id TEXT NOT NULL REFERENCES classes (id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    tenant TEXT NOT NULL,
    course TEXT NOT NULL,
    start_s REAL NOT NULL,
    end_s REAL NOT NULL,
    text TEXT NOT NULL,
    raw_text TEXT NOT NULL,
    speaker TEXT NOT NULL,
    final INTEGER NOT NULL,
    page INTEGER,
    received REAL NOT NULL,
    PRIMARY KEY (class_id, seq)
)
