CREATE TABLE `login_failures` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`user_id` integer NOT NULL,
	`address` text NOT NULL,
	`failed_at` text NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `login_failures_user_address_idx` ON `login_failures` (`user_id`,`address`,`failed_at`);--> statement-breakpoint
CREATE INDEX `login_failures_failed_at_idx` ON `login_failures` (`failed_at`);--> statement-breakpoint
CREATE TABLE `used_passwords` (
	`user_id` integer NOT NULL,
	`password_hash` text NOT NULL,
	`used_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	PRIMARY KEY(`user_id`, `password_hash`),
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
