-- Sign-in rules: a person's latest passwords, so that a new one can be refused when it is one
-- of the last 5 (as Unleash 6 does).
CREATE TABLE `used_passwords` (
	`user_id` integer NOT NULL,
	`password_hash` text NOT NULL,
	`used_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	PRIMARY KEY(`user_id`, `password_hash`),
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
-- Every current password counts as used: it was set before this table existed.
INSERT INTO `used_passwords` (`user_id`, `password_hash`, `used_at`)
SELECT `id`, `password_hash`, COALESCE(`updated_at`, `created_at`) FROM `users`
WHERE `password_hash` IS NOT NULL AND `deleted_at` IS NULL;
