-- Mastery per topic (Bayesian Knowledge Tracing), the observations behind it, weak areas
-- (misconceptions) and a course's own BKT parameters. Every row about a student names them.
CREATE TABLE mastery (
    tenant TEXT NOT NULL,
    course TEXT NOT NULL,
    student TEXT NOT NULL,
    topic TEXT NOT NULL,
    estimate REAL,
    correct INTEGER NOT NULL DEFAULT 0,
    incorrect INTEGER NOT NULL DEFAULT 0,
    updated REAL NOT NULL,
    PRIMARY KEY (tenant, course, student, topic),
    FOREIGN KEY (tenant, course) REFERENCES courses (tenant, id) ON DELETE CASCADE
);

CREATE TABLE mastery_observations (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant TEXT NOT NULL,
    course TEXT NOT NULL,
    student TEXT NOT NULL,
    topic TEXT NOT NULL,
    correct INTEGER NOT NULL,
    turn_id TEXT NOT NULL,
    estimate REAL NOT NULL,
    created REAL NOT NULL,
    FOREIGN KEY (tenant, course) REFERENCES courses (tenant, id) ON DELETE CASCADE
);

CREATE INDEX mastery_observations_by_student ON mastery_observations (tenant, course, student, topic);

CREATE TABLE weak_areas (
    id TEXT PRIMARY KEY,
    tenant TEXT NOT NULL,
    course TEXT NOT NULL,
    student TEXT NOT NULL,
    topic TEXT NOT NULL,
    misconception TEXT NOT NULL,
    strength REAL NOT NULL,
    turn_ids TEXT NOT NULL,
    weakened_by TEXT NOT NULL,
    created REAL NOT NULL,
    updated REAL NOT NULL,
    resolved REAL,
    FOREIGN KEY (tenant, course) REFERENCES courses (tenant, id) ON DELETE CASCADE
);

CREATE INDEX weak_areas_by_student ON weak_areas (tenant, course, student, topic);

CREATE TABLE mastery_params (
    tenant TEXT NOT NULL,
    course TEXT NOT NULL,
    prior REAL NOT NULL,
    learn REAL NOT NULL,
    slip REAL NOT NULL,
    guess REAL NOT NULL,
    PRIMARY KEY (tenant, course),
    FOREIGN KEY (tenant, course) REFERENCES courses (tenant, id) ON DELETE CASCADE
);
