-- Document frequencies per course and term, kept by every write, so a query knows which of
-- its terms are common before it reads their postings (see pg_search.py).
CREATE TABLE course_terms (
    course_pk INTEGER NOT NULL REFERENCES courses (pk) ON DELETE CASCADE,
    term_id INTEGER NOT NULL,
    df INTEGER NOT NULL,
    PRIMARY KEY (course_pk, term_id)
);
INSERT INTO course_terms (course_pk, term_id, df)
SELECT course_pk, term_id, SUM(cardinality(chunk_pks)) FROM postings GROUP BY course_pk, term_id;
