CREATE TABLE `api_token_project` (
	`secret_hash` text NOT NULL,
	`project` text NOT NULL,
	PRIMARY KEY(`secret_hash`, `project`),
	FOREIGN KEY (`secret_hash`) REFERENCES `api_tokens`(`secret_hash`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`project`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `api_tokens` (
	`secret_hash` text PRIMARY KEY NOT NULL,
	`id` text NOT NULL,
	`secret_prefix` text NOT NULL,
	`token_name` text NOT NULL,
	`type` text NOT NULL,
	`environment` text NOT NULL,
	`expires_at` text,
	`seen_at` text,
	`alias` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`created_by_user_id` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `api_tokens_id_unique` ON `api_tokens` (`id`);--> statement-breakpoint
CREATE INDEX `api_tokens_type_idx` ON `api_tokens` (`type`);--> statement-breakpoint
CREATE TABLE `client_applications` (
	`app_name` text PRIMARY KEY NOT NULL,
	`description` text,
	`url` text,
	`color` text,
	`icon` text,
	`strategies` text DEFAULT '[]' NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text,
	`seen_at` text
);
--> statement-breakpoint
CREATE TABLE `client_instances` (
	`app_name` text NOT NULL,
	`instance_id` text NOT NULL,
	`environment` text DEFAULT 'default' NOT NULL,
	`sdk_version` text,
	`client_ip` text,
	`interval` integer,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`last_seen` text,
	PRIMARY KEY(`app_name`, `instance_id`, `environment`)
);
--> statement-breakpoint
CREATE TABLE `client_metrics_env` (
	`feature_name` text NOT NULL,
	`app_name` text NOT NULL,
	`environment` text NOT NULL,
	`timestamp` text NOT NULL,
	`yes` integer DEFAULT 0 NOT NULL,
	`no` integer DEFAULT 0 NOT NULL,
	`variants` text DEFAULT '{}' NOT NULL,
	PRIMARY KEY(`feature_name`, `app_name`, `environment`, `timestamp`)
);
--> statement-breakpoint
CREATE INDEX `client_metrics_env_time_idx` ON `client_metrics_env` (`timestamp`);--> statement-breakpoint
CREATE TABLE `context_fields` (
	`name` text PRIMARY KEY NOT NULL,
	`description` text,
	`sort_order` integer DEFAULT 10 NOT NULL,
	`legal_values` text DEFAULT '[]' NOT NULL,
	`stickiness` integer DEFAULT false NOT NULL,
	`project` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text,
	FOREIGN KEY (`project`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `dependent_features` (
	`parent` text NOT NULL,
	`child` text NOT NULL,
	`enabled` integer DEFAULT true NOT NULL,
	`variants` text DEFAULT '[]' NOT NULL,
	PRIMARY KEY(`parent`, `child`),
	FOREIGN KEY (`parent`) REFERENCES `features`(`name`) ON UPDATE no action ON DELETE restrict,
	FOREIGN KEY (`child`) REFERENCES `features`(`name`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `dependent_features_child_idx` ON `dependent_features` (`child`);--> statement-breakpoint
CREATE TABLE `environments` (
	`name` text PRIMARY KEY NOT NULL,
	`type` text NOT NULL,
	`sort_order` integer DEFAULT 9999 NOT NULL,
	`enabled` integer DEFAULT true NOT NULL,
	`protected` integer DEFAULT false NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL
);
--> statement-breakpoint
CREATE TABLE `events` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`type` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`created_by` text NOT NULL,
	`created_by_user_id` integer,
	`project` text,
	`environment` text,
	`feature_name` text,
	`data` text,
	`pre_data` text
);
--> statement-breakpoint
CREATE INDEX `events_feature_idx` ON `events` (`feature_name`);--> statement-breakpoint
CREATE INDEX `events_type_idx` ON `events` (`type`);--> statement-breakpoint
CREATE TABLE `favorite_features` (
	`feature` text NOT NULL,
	`user_id` integer NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	PRIMARY KEY(`feature`, `user_id`),
	FOREIGN KEY (`feature`) REFERENCES `features`(`name`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `favorite_features_user_idx` ON `favorite_features` (`user_id`,`feature`);--> statement-breakpoint
CREATE TABLE `feature_environments` (
	`feature_name` text NOT NULL,
	`environment` text NOT NULL,
	`enabled` integer DEFAULT false NOT NULL,
	`variants` text DEFAULT '[]' NOT NULL,
	`last_seen_at` text,
	PRIMARY KEY(`feature_name`, `environment`),
	FOREIGN KEY (`feature_name`) REFERENCES `features`(`name`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`environment`) REFERENCES `environments`(`name`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `feature_environments_env_enabled_idx` ON `feature_environments` (`environment`,`enabled`,`feature_name`);--> statement-breakpoint
CREATE TABLE `feature_lifecycles` (
	`feature` text NOT NULL,
	`stage` text NOT NULL,
	`status` text,
	`status_value` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	PRIMARY KEY(`feature`, `stage`),
	FOREIGN KEY (`feature`) REFERENCES `features`(`name`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `feature_lifecycles_latest_idx` ON `feature_lifecycles` (`feature`,`created_at`);--> statement-breakpoint
CREATE TABLE `feature_strategies` (
	`id` text PRIMARY KEY NOT NULL,
	`feature_name` text NOT NULL,
	`project_name` text NOT NULL,
	`environment` text NOT NULL,
	`strategy_name` text NOT NULL,
	`title` text,
	`parameters` text DEFAULT '{}' NOT NULL,
	`constraints` text DEFAULT '[]' NOT NULL,
	`variants` text DEFAULT '[]' NOT NULL,
	`sort_order` integer DEFAULT 9999 NOT NULL,
	`disabled` integer DEFAULT false NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`created_by_user_id` integer,
	FOREIGN KEY (`feature_name`) REFERENCES `features`(`name`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `feature_strategies_feature_env_idx` ON `feature_strategies` (`feature_name`,`environment`,`sort_order`);--> statement-breakpoint
CREATE INDEX `feature_strategies_env_idx` ON `feature_strategies` (`environment`,`project_name`);--> statement-breakpoint
CREATE TABLE `feature_strategy_segment` (
	`feature_strategy_id` text NOT NULL,
	`segment_id` integer NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	PRIMARY KEY(`feature_strategy_id`, `segment_id`),
	FOREIGN KEY (`feature_strategy_id`) REFERENCES `feature_strategies`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`segment_id`) REFERENCES `segments`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `feature_strategy_segment_segment_idx` ON `feature_strategy_segment` (`segment_id`);--> statement-breakpoint
CREATE TABLE `feature_tag` (
	`feature_name` text NOT NULL,
	`tag_type` text NOT NULL,
	`tag_value` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`created_by_user_id` integer,
	PRIMARY KEY(`feature_name`, `tag_type`, `tag_value`),
	FOREIGN KEY (`feature_name`) REFERENCES `features`(`name`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `feature_tag_tag_idx` ON `feature_tag` (`tag_type`,`tag_value`,`feature_name`);--> statement-breakpoint
CREATE TABLE `feature_types` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`lifetime_days` integer
);
--> statement-breakpoint
CREATE TABLE `features` (
	`name` text PRIMARY KEY NOT NULL,
	`description` text,
	`type` text DEFAULT 'release' NOT NULL,
	`project` text DEFAULT 'default' NOT NULL,
	`stale` integer DEFAULT false NOT NULL,
	`potentially_stale` integer DEFAULT false NOT NULL,
	`impression_data` integer DEFAULT false NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`created_by_user_id` integer,
	`archived_at` text,
	`last_seen_at` text,
	FOREIGN KEY (`project`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `features_archived_created_idx` ON `features` (`archived_at`,`created_at`,`name`);--> statement-breakpoint
CREATE INDEX `features_project_idx` ON `features` (`project`,`archived_at`);--> statement-breakpoint
CREATE INDEX `features_type_idx` ON `features` (`type`);--> statement-breakpoint
CREATE INDEX `features_stale_idx` ON `features` (`stale`);--> statement-breakpoint
CREATE INDEX `features_created_by_idx` ON `features` (`created_by_user_id`);--> statement-breakpoint
CREATE INDEX `features_last_seen_idx` ON `features` (`last_seen_at`);--> statement-breakpoint
CREATE TABLE `import_job_chunks` (
	`job_id` text NOT NULL,
	`chunk_index` integer NOT NULL,
	`payload` text NOT NULL,
	`status` text DEFAULT 'pending' NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`feature_count` integer DEFAULT 0 NOT NULL,
	`applied_at` text,
	PRIMARY KEY(`job_id`, `chunk_index`),
	FOREIGN KEY (`job_id`) REFERENCES `import_jobs`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `import_jobs` (
	`id` text PRIMARY KEY NOT NULL,
	`project` text NOT NULL,
	`environment` text NOT NULL,
	`status` text DEFAULT 'queued' NOT NULL,
	`total_chunks` integer NOT NULL,
	`done_chunks` integer DEFAULT 0 NOT NULL,
	`total_features` integer DEFAULT 0 NOT NULL,
	`errors` text DEFAULT '[]' NOT NULL,
	`created_by` text NOT NULL,
	`created_by_user_id` integer,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`started_at` text,
	`finished_at` text
);
--> statement-breakpoint
CREATE INDEX `import_jobs_target_idx` ON `import_jobs` (`project`,`environment`,`status`);--> statement-breakpoint
CREATE TABLE `permissions` (
	`id` integer PRIMARY KEY NOT NULL,
	`permission` text NOT NULL,
	`display_name` text NOT NULL,
	`type` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `permissions_permission_unique` ON `permissions` (`permission`);--> statement-breakpoint
CREATE TABLE `project_environments` (
	`project_id` text NOT NULL,
	`environment_name` text NOT NULL,
	`default_strategy` text,
	PRIMARY KEY(`project_id`, `environment_name`),
	FOREIGN KEY (`project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`environment_name`) REFERENCES `environments`(`name`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `projects` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`mode` text DEFAULT 'open' NOT NULL,
	`default_stickiness` text DEFAULT 'default' NOT NULL,
	`feature_limit` integer,
	`feature_naming_pattern` text,
	`feature_naming_example` text,
	`feature_naming_description` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`updated_at` text,
	`archived_at` text
);
--> statement-breakpoint
CREATE TABLE `public_signup_tokens` (
	`secret` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`expires_at` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`created_by` text,
	`role_id` integer NOT NULL,
	`url` text,
	`enabled` integer DEFAULT true NOT NULL,
	FOREIGN KEY (`role_id`) REFERENCES `roles`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `public_signup_tokens_user` (
	`secret` text NOT NULL,
	`user_id` integer NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	PRIMARY KEY(`secret`, `user_id`),
	FOREIGN KEY (`secret`) REFERENCES `public_signup_tokens`(`secret`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `role_permission` (
	`role_id` integer NOT NULL,
	`permission` text NOT NULL,
	`environment` text DEFAULT '' NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	PRIMARY KEY(`role_id`, `permission`, `environment`),
	FOREIGN KEY (`role_id`) REFERENCES `roles`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`permission`) REFERENCES `permissions`(`permission`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `role_user` (
	`role_id` integer NOT NULL,
	`user_id` integer NOT NULL,
	`project` text DEFAULT 'default' NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`created_by_user_id` integer,
	PRIMARY KEY(`role_id`, `user_id`, `project`),
	FOREIGN KEY (`role_id`) REFERENCES `roles`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `role_user_user_idx` ON `role_user` (`user_id`);--> statement-breakpoint
CREATE TABLE `roles` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`type` text DEFAULT 'custom' NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`created_by_user_id` integer,
	`updated_at` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `roles_type_name_unique` ON `roles` (`type`,`name`);--> statement-breakpoint
CREATE TABLE `segments` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`constraints` text DEFAULT '[]' NOT NULL,
	`segment_project_id` text,
	`created_by` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	FOREIGN KEY (`segment_project_id`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `segments_name_idx` ON `segments` (`name`);--> statement-breakpoint
CREATE TABLE `strategies` (
	`name` text PRIMARY KEY NOT NULL,
	`title` text,
	`display_name` text,
	`description` text,
	`built_in` integer DEFAULT false NOT NULL,
	`deprecated` integer DEFAULT false NOT NULL,
	`sort_order` integer DEFAULT 9999 NOT NULL,
	`parameters` text DEFAULT '[]' NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL
);
--> statement-breakpoint
CREATE TABLE `tag_types` (
	`name` text PRIMARY KEY NOT NULL,
	`description` text,
	`icon` text,
	`color` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL
);
--> statement-breakpoint
CREATE TABLE `tags` (
	`type` text NOT NULL,
	`value` text NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	PRIMARY KEY(`type`, `value`),
	FOREIGN KEY (`type`) REFERENCES `tag_types`(`name`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `users` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text,
	`username` text,
	`email` text,
	`image_url` text,
	`password_hash` text,
	`login_attempts` integer DEFAULT 0 NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`seen_at` text,
	`deleted_at` text,
	`is_service` integer DEFAULT false NOT NULL,
	`is_system` integer DEFAULT false NOT NULL,
	`scim_id` text,
	`created_by_user_id` integer,
	`updated_at` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `users_email_unique` ON `users` (`email`);--> statement-breakpoint
CREATE UNIQUE INDEX `users_username_unique` ON `users` (`username`);