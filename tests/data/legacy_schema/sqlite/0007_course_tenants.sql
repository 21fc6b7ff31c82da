INSERT INTO tenants (id, name, created)
SELECT DISTINCT tenant, tenant, 0 FROM courses WHERE tenant NOT IN (SELECT id FROM tenants)
