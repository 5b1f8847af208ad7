CREATE TABLE `change_request_changes` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`change_request_id` integer NOT NULL,
	`feature` text NOT NULL,
	`action` text NOT NULL,
	`payload` text NOT NULL,
	`base` text,
	`created_by_user_id` integer NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	FOREIGN KEY (`change_request_id`) REFERENCES `change_requests`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `change_request_changes_request_idx` ON `change_request_changes` (`change_request_id`);--> statement-breakpoint
CREATE INDEX `change_request_changes_feature_idx` ON `change_request_changes` (`feature`);--> statement-breakpoint
CREATE TABLE `change_request_comments` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`change_request_id` integer NOT NULL,
	`text` text NOT NULL,
	`created_by_user_id` integer NOT NULL,
	`created_by_name` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	FOREIGN KEY (`change_request_id`) REFERENCES `change_requests`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `change_request_comments_request_idx` ON `change_request_comments` (`change_request_id`);--> statement-breakpoint
CREATE TABLE `change_request_reviews` (
	`change_request_id` integer NOT NULL,
	`user_id` integer NOT NULL,
	`verdict` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	PRIMARY KEY(`change_request_id`, `user_id`),
	FOREIGN KEY (`change_request_id`) REFERENCES `change_requests`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `change_request_settings` (
	`project` text NOT NULL,
	`environment` text NOT NULL,
	`enabled` integer DEFAULT false NOT NULL,
	`required_approvals` integer DEFAULT 1 NOT NULL,
	PRIMARY KEY(`project`, `environment`),
	FOREIGN KEY (`project`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`environment`) REFERENCES `environments`(`name`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `change_requests` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`project` text NOT NULL,
	`environment` text NOT NULL,
	`title` text,
	`state` text DEFAULT 'Draft' NOT NULL,
	`min_approvals` integer DEFAULT 1 NOT NULL,
	`created_by_user_id` integer NOT NULL,
	`created_by_name` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`state_timestamps` text NOT NULL,
	`scheduled_at` text,
	`schedule_status` text,
	`schedule_failure` text,
	`scheduled_by_user_id` integer,
	`scheduled_by_name` text,
	FOREIGN KEY (`project`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `change_requests_project_state_idx` ON `change_requests` (`project`,`state`);--> statement-breakpoint
CREATE INDEX `change_requests_scheduled_idx` ON `change_requests` (`state`,`scheduled_at`);