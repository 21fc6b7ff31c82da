-- PostgreSQL's first schema already holds this change.

-- sqlite:
INSERT INTO tenants (id, name, created)
SELECT DISTINCT tenant, tenant, 0 FROM courses WHERE tenant NOT IN (SELECT id FROM tenants);

-- postgres:
