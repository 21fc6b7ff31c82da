ALTER TABLE courses ADD COLUMN allow_solutions INTEGER NOT NULL DEFAULT 0;

CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    tenant TEXT NOT NULL,
    course TEXT NOT NULL,
    student TEXT NOT NULL,
    created REAL NOT NULL,
    updated REAL NOT NULL,
    ended REAL,
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
    created REAL NOT NULL,
    PRIMARY KEY (session_id, ordinal)
);

CREATE INDEX turns_by_exercise ON turns (tenant, course, student, exercise_key)
