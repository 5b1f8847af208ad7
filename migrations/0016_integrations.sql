CREATE TABLE `addon_deliveries` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`addon_id` integer NOT NULL,
	`event_id` integer NOT NULL,
	`feature_name` text,
	`status` text DEFAULT 'pending' NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`last_error` text,
	`lease_until` text,
	`queued_at` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	FOREIGN KEY (`addon_id`) REFERENCES `addons`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `addon_deliveries_addon_event_unique` ON `addon_deliveries` (`addon_id`,`event_id`);--> statement-breakpoint
CREATE INDEX `addon_deliveries_unqueued_idx` ON `addon_deliveries` (`queued_at`);--> statement-breakpoint
CREATE INDEX `addon_deliveries_feature_idx` ON `addon_deliveries` (`addon_id`,`feature_name`,`status`);--> statement-breakpoint
CREATE TABLE `addons` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`provider` text NOT NULL,
	`description` text,
	`enabled` integer DEFAULT true NOT NULL,
	`parameters` text NOT NULL,
	`events` text NOT NULL,
	`projects` text NOT NULL,
	`environments` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL
);
--> statement-breakpoint
CREATE TABLE `integration_events` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`integration_id` integer NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`state` text NOT NULL,
	`state_details` text NOT NULL,
	`event` text NOT NULL,
	`details` text NOT NULL,
	FOREIGN KEY (`integration_id`) REFERENCES `addons`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `integration_events_integration_idx` ON `integration_events` (`integration_id`,`id`);