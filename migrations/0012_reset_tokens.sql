-- Reset tokens: the link a new user gets (`/new-user?token=<secret>`) to choose a password,
-- as Unleash hands out on user creation. Only the SHA-256 of the secret is stored.
CREATE TABLE `reset_tokens` (
	`secret_hash` text PRIMARY KEY NOT NULL,
	`user_id` integer NOT NULL,
	`expires_at` text NOT NULL,
	`used_at` text,
	`created_by` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `reset_tokens_user_idx` ON `reset_tokens` (`user_id`);
