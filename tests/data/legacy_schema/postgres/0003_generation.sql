-- A course's version, from one sequence for the whole store (a course removed and created
-- again never reuses one): new at creation and at every write to the course's documents, so
-- processes can cache search results per version (see Store.search_state).
CREATE SEQUENCE course_generation;
ALTER TABLE courses ADD COLUMN generation BIGINT NOT NULL DEFAULT nextval('course_generation');
