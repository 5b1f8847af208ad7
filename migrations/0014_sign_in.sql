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
--> statement-breakpoint
-- Wrong passwords per account and client address: the sign-in limits count them (a stranger
-- failing from other addresses can no longer lock the owner out, as a per-account count did).
CREATE TABLE `login_failures` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`user_id` integer NOT NULL,
	`address` text NOT NULL,
	`failed_at` text NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `login_failures_user_address_idx` ON `login_failures` (`user_id`,`address`,`failed_at`);
--> statement-breakpoint
CREATE INDEX `login_failures_failed_at_idx` ON `login_failures` (`failed_at`);
