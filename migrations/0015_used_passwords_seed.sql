-- Every current password counts as used: it was set before used_passwords existed, and a
-- person may not set it again as their new one (Unleash refuses the last 5).
INSERT INTO `used_passwords` (`user_id`, `password_hash`, `used_at`)
SELECT `id`, `password_hash`, COALESCE(`updated_at`, `created_at`) FROM `users`
WHERE `password_hash` IS NOT NULL AND `deleted_at` IS NULL;
