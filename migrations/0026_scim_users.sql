ALTER TABLE `users` ADD `scim_external_id` text;--> statement-breakpoint
CREATE UNIQUE INDEX `users_scim_id_unique` ON `users` (`scim_id`);