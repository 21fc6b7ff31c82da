-- the ingest queue: each job's staged files, and the result of each file once it is ingested,
-- so that a restarted server resumes a job at its first file without a result
CREATE TABLE job_files (
    job TEXT NOT NULL,
    ordinal INTEGER NOT NULL,
    name TEXT NOT NULL,
    meta TEXT NOT NULL,
    result TEXT,
    PRIMARY KEY (job, ordinal)
);

CREATE INDEX jobs_by_status ON jobs (status, created);
