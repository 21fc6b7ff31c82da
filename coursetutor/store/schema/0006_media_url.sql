-- PostgreSQL's first schema already holds this change.

-- sqlite:
ALTER TABLE documents ADD COLUMN media_url TEXT NOT NULL DEFAULT '';

-- postgres:
