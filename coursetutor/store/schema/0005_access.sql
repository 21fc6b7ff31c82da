-- PostgreSQL's first schema already holds this change.

-- sqlite:
CREATE TABLE tenants (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    created REAL NOT NULL
);

INSERT INTO tenants (id, name, created)
SELECT DISTINCT tenant, tenant, 0 FROM courses
UNION SELECT 'default', 'default', 0;

CREATE TABLE api_keys (
    id TEXT PRIMARY KEY,
    tenant TEXT NOT NULL,
    role TEXT NOT NULL,
    student TEXT NOT NULL,
    name TEXT NOT NULL,
    secret_hash TEXT NOT NULL,
    created REAL NOT NULL,
    revoked REAL
);

CREATE INDEX api_keys_by_tenant ON api_keys (tenant, created);

CREATE TABLE enrollments (
    tenant TEXT NOT NULL,
    course TEXT NOT NULL,
    student TEXT NOT NULL,
    created REAL NOT NULL,
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
    created REAL NOT NULL,
    updated REAL NOT NULL
);

CREATE INDEX jobs_by_course ON jobs (tenant, course, created);

-- postgres:
