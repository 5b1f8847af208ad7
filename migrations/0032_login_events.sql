CREATE TABLE `login_events` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`username` text NOT NULL,
	`auth_type` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`successful` integer NOT NULL,
	`ip` text,
	`failure_reason` text,
	`dedupe_key` text
);
--> statement-breakpoint
CREATE INDEX `login_events_created_idx` ON `login_events` (`created_at`);--> statement-breakpoint
CREATE UNIQUE INDEX `login_events_dedupe_unique` ON `login_events` (`dedupe_key`);