CREATE TABLE `impact_metric_series` (
	`name` text NOT NULL,
	`series` text NOT NULL,
	`labels` text NOT NULL,
	`type` text NOT NULL,
	`value` real NOT NULL,
	`count` real NOT NULL,
	`buckets` text NOT NULL,
	`updated_at` text NOT NULL,
	PRIMARY KEY(`name`, `series`)
);
--> statement-breakpoint
CREATE INDEX `impact_metric_series_updated_idx` ON `impact_metric_series` (`updated_at`);--> statement-breakpoint
CREATE TABLE `impact_metrics` (
	`name` text PRIMARY KEY NOT NULL,
	`type` text NOT NULL,
	`help` text NOT NULL,
	`seen_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `impact_metrics_seen_idx` ON `impact_metrics` (`seen_at`);