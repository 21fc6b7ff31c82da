CREATE TABLE counters (
    name TEXT PRIMARY KEY,
    value INTEGER NOT NULL
);
INSERT INTO counters (name, value)
    SELECT 'generation', COALESCE(MAX(generation), 0) FROM courses;
