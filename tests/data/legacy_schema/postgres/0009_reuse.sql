-- Answered lecture questions, kept so that the same question asked again in the course can
-- reuse the earlier answer's passages: the normalised key and its embedding (the course's
-- embedder, float32 bytes), the chunks the answer was given, its text, the turn it came from
-- and the course generation it was answered at. Every row names the student who asked.
CREATE TABLE answer_keys (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant TEXT NOT NULL,
    course TEXT NOT NULL,
    student TEXT NOT NULL,
    turn_id TEXT NOT NULL,
    question TEXT NOT NULL,
    key TEXT NOT NULL,
    language TEXT NOT NULL,
    model TEXT NOT NULL,
    vector BYTEA NOT NULL,
    chunk_ids TEXT NOT NULL,
    answer TEXT NOT NULL,
    generation BIGINT NOT NULL,
    created DOUBLE PRECISION NOT NULL,
    FOREIGN KEY (tenant, course) REFERENCES courses (tenant, id) ON DELETE CASCADE
);

CREATE INDEX answer_keys_by_course ON answer_keys (tenant, course, model, id);

CREATE INDEX answer_keys_by_student ON answer_keys (tenant, student, course)
