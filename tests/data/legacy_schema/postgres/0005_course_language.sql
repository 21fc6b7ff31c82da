-- A course's language follows its documents (the language most of its chunks are in) unless
-- a teacher set it (language_set = 1 keeps it). Courses stored before follow their documents.
ALTER TABLE courses ADD COLUMN language_set INTEGER NOT NULL DEFAULT 0;
UPDATE courses SET language = COALESCE((
    SELECT d.language FROM chunks k JOIN documents d
        ON d.tenant = k.tenant AND d.course = k.course AND d.id = k.document_id
    WHERE k.tenant = courses.tenant AND k.course = courses.id
    GROUP BY d.language ORDER BY COUNT(*) DESC, d.language LIMIT 1), language);
