-- Mastery per topic (Bayesian Knowledge Tracing), the observations behind it, weak areas
-- (misconceptions) and a course's own BKT parameters. Every row about a student names them.
CREATE TABLE mastery (
    tenant TEXT NOT NULL,
    course TEXT NOT NULL,
    student TEXT NOT NULL,
    topic TEXT NOT NULL,
    estimate DOUBLE PRECISION,
    correct INTEGER NOT NULL DEFAULT 0,
    incorrect INTEGER NOT NULL DEFAULT 0,
    updated DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (tenant, course, student, topic),
    FOREIGN KEY (tenant, course) REFERENCES courses (tenant, id) ON DELETE CASCADE
);

CREATE TABLE mastery_observations (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant TEXT NOT NULL,
    course TEXT NOT NULL,
    student TEXT NOT NULL,
    topic TEXT NOT NULL,
    correct INTEGER NOT NULL,
    turn_id TEXT NOT NULL,
    estimate DOUBLE PRECISION NOT NULL,
    created DOUBLE PRECISION NOT NULL,
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
    strength DOUBLE PRECISION NOT NULL,
    turn_ids TEXT NOT NULL,
    weakened_by TEXT NOT NULL,
    created DOUBLE PRECISION NOT NULL,
    updated DOUBLE PRECISION NOT NULL,
    resolved DOUBLE PRECISION,
    FOREIGN KEY (tenant, course) REFERENCES courses (tenant, id) ON DELETE CASCADE
);

CREATE INDEX weak_areas_by_student ON weak_areas (tenant, course, student, topic);

CREATE TABLE mastery_params (
    tenant TEXT NOT NULL,
    course TEXT NOT NULL,
    prior DOUBLE PRECISION NOT NULL,
    learn DOUBLE PRECISION NOT NULL,
    slip DOUBLE PRECISION NOT NULL,
    guess DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (tenant, course),
    FOREIGN KEY (tenant, course) REFERENCES courses (tenant, id) ON DELETE CASCADE
);
