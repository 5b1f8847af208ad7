CREATE TABLE `feature_links` (
	`id` text PRIMARY KEY NOT NULL,
	`feature_name` text NOT NULL,
	`url` text NOT NULL,
	`title` text,
	`domain` text,
	FOREIGN KEY (`feature_name`) REFERENCES `features`(`name`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `feature_links_feature_idx` ON `feature_links` (`feature_name`,`id`);--> statement-breakpoint
CREATE TABLE `unknown_flags` (
	`name` text NOT NULL,
	`app_name` text NOT NULL,
	`environment` text NOT NULL,
	`seen_at` text NOT NULL,
	PRIMARY KEY(`name`, `app_name`, `environment`)
);
--> statement-breakpoint
CREATE INDEX `unknown_flags_seen_idx` ON `unknown_flags` (`seen_at`);--> statement-breakpoint
-- Unleash 8.0 added a sixth flag type, listed after the five of 6.10.1.
INSERT OR IGNORE INTO `feature_types` (id, name, description, lifetime_days) VALUES
  ('sunset', 'Sunset', 'Coordinate the planned removal of an existing feature. Expected lifetime: ~90 days', 90);
