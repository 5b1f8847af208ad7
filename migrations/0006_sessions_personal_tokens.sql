-- Sign-in sessions and personal access tokens. Like API keys, both are stored only as the
-- SHA-256 (hex) of their secret; the secret itself is never written anywhere.
CREATE TABLE `sessions` (
	`id_hash` text PRIMARY KEY NOT NULL,
	`id` text NOT NULL,
	`user_id` integer NOT NULL REFERENCES `users`(`id`) ON DELETE CASCADE,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`expires_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `sessions_id_unique` ON `sessions` (`id`);
--> statement-breakpoint
CREATE INDEX `sessions_user_idx` ON `sessions` (`user_id`);
--> statement-breakpoint
CREATE INDEX `sessions_expires_idx` ON `sessions` (`expires_at`);
--> statement-breakpoint
CREATE TABLE `personal_access_tokens` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`secret_hash` text NOT NULL,
	`description` text NOT NULL,
	`user_id` integer NOT NULL REFERENCES `users`(`id`) ON DELETE CASCADE,
	`expires_at` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`seen_at` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `personal_access_tokens_secret_hash_unique` ON `personal_access_tokens` (`secret_hash`);
--> statement-breakpoint
CREATE UNIQUE INDEX `personal_access_tokens_user_description_unique` ON `personal_access_tokens` (`user_id`, `description`);
--> statement-breakpoint
-- When the last of a run of failed sign-ins happened: with login_attempts, the account lockout.
ALTER TABLE `users` ADD `last_failed_login_at` text;
