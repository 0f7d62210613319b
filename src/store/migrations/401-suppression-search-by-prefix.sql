-- name: the suppression lists' search by prefix
-- The dashboard's search of its suppression lists (`q`, store/suppressions.ts and
-- store/address-suppressions.ts): a range of the workspace's tokens or addresses in byte
-- order (COLLATE "C", whatever the database's collation). A token's first 64 characters
-- only, as tokens may be longer than an index entry takes; the whole token is then checked.
CREATE INDEX IF NOT EXISTS token_suppressions_by_prefix ON token_suppressions (workspace_id, (left(device_token, 64) COLLATE "C"));
CREATE INDEX IF NOT EXISTS address_suppressions_by_prefix ON address_suppressions (workspace_id, (address COLLATE "C"));
