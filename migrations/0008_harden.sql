-- Hardening (helper "harden").

-- Invite secrets no longer appear in audit events: events written before this change keep
-- only the secret's first 6 characters, as new ones do, and lose the url that carried it.
UPDATE events
SET data = json_remove(json_set(data, '$.secretPrefix', substr(json_extract(data, '$.secret'), 1, 6) || '***'), '$.secret', '$.url')
WHERE type LIKE 'public-signup-token-%' AND json_extract(data, '$.secret') IS NOT NULL;
UPDATE events
SET pre_data = json_remove(json_set(pre_data, '$.secretPrefix', substr(json_extract(pre_data, '$.secret'), 1, 6) || '***'), '$.secret', '$.url')
WHERE type LIKE 'public-signup-token-%' AND json_extract(pre_data, '$.secret') IS NOT NULL;
