CREATE TABLE summaries (
    tenant TEXT NOT NULL,
    course TEXT NOT NULL,
    student TEXT NOT NULL,
    session_id TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('running', 'session')),
    text TEXT NOT NULL,
    turn_ids TEXT NOT NULL,
    topics TEXT NOT NULL,
    exercise_key TEXT NOT NULL,
    level TEXT NOT NULL,
    created DOUBLE PRECISION NOT NULL,
    updated DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (session_id, kind),
    FOREIGN KEY (tenant, course) REFERENCES courses (tenant, id) ON DELETE CASCADE
);

CREATE INDEX summaries_by_student ON summaries (tenant, course, student, kind, updated)
