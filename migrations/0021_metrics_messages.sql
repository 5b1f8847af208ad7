CREATE TABLE `metrics_messages` (
	`id` text PRIMARY KEY NOT NULL,
	`processed_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `metrics_messages_processed_idx` ON `metrics_messages` (`processed_at`);