CREATE TABLE `metrics_flushes` (
	`id` integer PRIMARY KEY NOT NULL,
	`flushed_at` text NOT NULL,
	`min_received` text NOT NULL,
	`max_received` text NOT NULL,
	`message_ids` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `metrics_flushes_max_received_idx` ON `metrics_flushes` (`max_received`);