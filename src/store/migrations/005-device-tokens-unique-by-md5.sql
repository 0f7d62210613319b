-- name: device tokens unique by their md5
-- A device token may be 4,096 characters (README, Routes), more than a btree index entry
-- holds (2,704 bytes) when it does not compress: tokens are unique in a workspace by
-- their md5 instead. Only a workspace's own tokens could collide, never another's.
ALTER TABLE devices DROP CONSTRAINT devices_workspace_id_device_token_key;
CREATE UNIQUE INDEX devices_by_token ON devices (workspace_id, md5(device_token));
