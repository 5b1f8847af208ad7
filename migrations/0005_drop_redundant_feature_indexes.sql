DROP INDEX `features_project_idx`;--> statement-breakpoint
DROP INDEX `features_type_idx`;