CREATE TABLE `user_feedback` (
	`user_id` integer NOT NULL,
	`feedback_id` text NOT NULL,
	`given` text,
	`never_show` integer DEFAULT false NOT NULL,
	PRIMARY KEY(`user_id`, `feedback_id`),
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
