CREATE TABLE `import_job_parts` (
	`job_id` text NOT NULL,
	`chunk_index` integer NOT NULL,
	`part` integer NOT NULL,
	`payload` blob NOT NULL,
	PRIMARY KEY(`job_id`, `chunk_index`, `part`),
	FOREIGN KEY (`job_id`) REFERENCES `import_jobs`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
ALTER TABLE `import_jobs` ADD `queued_at` text;--> statement-breakpoint
ALTER TABLE `import_jobs` ADD `context` text;