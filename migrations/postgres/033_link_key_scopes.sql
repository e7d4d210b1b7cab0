-- Up Migration
-- What a workspace key may do (src/links/auth/scopes.ts). Keys made before scopes keep their full
-- power: they get every scope, and so does a key issued without naming any (the operator's).
ALTER TABLE api_keys ADD COLUMN scopes text[] NOT NULL
  DEFAULT '{links:read,links:write,analytics:read,conversions:write,domains:write,webhooks:write,keys:write}'
  CHECK (scopes <@ '{links:read,links:write,analytics:read,conversions:write,domains:write,webhooks:write,keys:write}'::text[] AND cardinality(scopes) > 0);

-- Down Migration
ALTER TABLE api_keys DROP COLUMN scopes;
