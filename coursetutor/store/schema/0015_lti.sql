-- LTI 1.3: the platforms (LMSs) a tenant registered, the tool's own signing keys, the nonces
-- launches used, LMS users and LMS course links, and the last score sent to each grade book.
-- A key may expire (the short-lived keys of LTI launches).
ALTER TABLE api_keys ADD COLUMN expires REAL;

CREATE TABLE lti_platforms (
    id TEXT PRIMARY KEY,
    tenant TEXT NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    issuer TEXT NOT NULL,
    client_id TEXT NOT NULL,
    deployment_ids TEXT NOT NULL,
    jwks_url TEXT NOT NULL,
    auth_login_url TEXT NOT NULL,
    token_url TEXT NOT NULL,
    frame_origins TEXT NOT NULL,
    created REAL NOT NULL,
    UNIQUE (issuer, client_id)
);

CREATE INDEX lti_platforms_by_tenant ON lti_platforms (tenant, created);

CREATE TABLE lti_nonces (
    issuer TEXT NOT NULL,
    nonce TEXT NOT NULL,
    expires REAL NOT NULL,
    PRIMARY KEY (issuer, nonce)
);

CREATE INDEX lti_nonces_by_expiry ON lti_nonces (expires);

CREATE TABLE lti_tool_keys (
    kid TEXT PRIMARY KEY,
    private_pem TEXT NOT NULL,
    created REAL NOT NULL,
    retired REAL
);

CREATE TABLE lti_users (
    platform TEXT NOT NULL REFERENCES lti_platforms (id) ON DELETE CASCADE,
    sub TEXT NOT NULL,
    tenant TEXT NOT NULL,
    student TEXT NOT NULL,
    PRIMARY KEY (platform, sub)
);

CREATE INDEX lti_users_by_student ON lti_users (tenant, student);

CREATE TABLE lti_links (
    platform TEXT NOT NULL REFERENCES lti_platforms (id) ON DELETE CASCADE,
    context TEXT NOT NULL,
    resource_link TEXT NOT NULL,
    tenant TEXT NOT NULL,
    course TEXT NOT NULL,
    memberships_url TEXT NOT NULL,
    lineitem_url TEXT NOT NULL,
    grades INTEGER NOT NULL,
    topic TEXT NOT NULL,
    updated REAL NOT NULL,
    PRIMARY KEY (platform, context, resource_link),
    FOREIGN KEY (tenant, course) REFERENCES courses (tenant, id) ON DELETE CASCADE
);

CREATE INDEX lti_links_by_course ON lti_links (tenant, course);

CREATE TABLE lti_scores (
    lineitem TEXT NOT NULL,
    tenant TEXT NOT NULL,
    course TEXT NOT NULL,
    student TEXT NOT NULL,
    score REAL NOT NULL,
    sent REAL NOT NULL,
    PRIMARY KEY (lineitem, student)
);

CREATE INDEX lti_scores_by_student ON lti_scores (tenant, course, student);
