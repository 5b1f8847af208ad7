-- Hardening (helper "harden").

-- Invite secrets no longer appear in audit events: events written before this change keep
-- only the secret's first 6 characters, as new ones do, and lose the url that carried it.
UPDATE events
SET data = json_remove(json_set(data, '$.secretPrefix', substr(json_extract(data, '$.secret'), 1, 6) || '***'), '$.secret', '$.url')
WHERE type LIKE 'public-signup-token-%' AND json_extract(data, '$.secret') IS NOT NULL;
UPDATE events
SET pre_data = json_remove(json_set(pre_data, '$.secretPrefix', substr(json_extract(pre_data, '$.secret'), 1, 6) || '***'), '$.secret', '$.url')
WHERE type LIKE 'public-signup-token-%' AND json_extract(pre_data, '$.secret') IS NOT NULL;

-- A frontend key (public by design) may create only so many client instances a day: each
-- instance it creates remembers the key's id. Expiry of old instances reads last_seen.
ALTER TABLE `client_instances` ADD `created_by_token` text;
CREATE INDEX `client_instances_token_idx` ON `client_instances` (`created_by_token`, `created_at`);
CREATE INDEX `client_instances_last_seen_idx` ON `client_instances` (`last_seen`);
