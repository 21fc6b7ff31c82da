-- Students' profiles and the topics they studied, a teacher's correction of a course's topic
-- list, and how many days a course keeps its turns (0: forever). Every table about a student
-- has tenant, course and student columns, so erasing a student finds its rows by schema.
ALTER TABLE courses ADD COLUMN retention_days INTEGER NOT NULL DEFAULT 0;

CREATE TABLE course_topics (
    tenant TEXT NOT NULL,
    course TEXT NOT NULL,
    topics TEXT NOT NULL,
    updated REAL NOT NULL,
    PRIMARY KEY (tenant, course),
    FOREIGN KEY (tenant, course) REFERENCES courses (tenant, id) ON DELETE CASCADE
);

CREATE TABLE profiles (
    tenant TEXT NOT NULL,
    course TEXT NOT NULL,
    student TEXT NOT NULL,
    level INTEGER NOT NULL DEFAULT 0,
    language TEXT NOT NULL DEFAULT '',
    style TEXT NOT NULL DEFAULT '',
    goals TEXT NOT NULL DEFAULT '',
    created REAL NOT NULL,
    updated REAL NOT NULL,
    PRIMARY KEY (tenant, course, student),
    FOREIGN KEY (tenant, course) REFERENCES courses (tenant, id) ON DELETE CASCADE
);

CREATE TABLE studied_topics (
    tenant TEXT NOT NULL,
    course TEXT NOT NULL,
    student TEXT NOT NULL,
    topic TEXT NOT NULL,
    first_seen REAL NOT NULL,
    last_seen REAL NOT NULL,
    turns INTEGER NOT NULL,
    turn_ids TEXT NOT NULL,
    PRIMARY KEY (tenant, course, student, topic),
    FOREIGN KEY (tenant, course) REFERENCES courses (tenant, id) ON DELETE CASCADE
)
