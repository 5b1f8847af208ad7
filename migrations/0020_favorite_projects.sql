CREATE TABLE `favorite_projects` (
	`project` text NOT NULL,
	`user_id` integer NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	PRIMARY KEY(`project`, `user_id`),
	FOREIGN KEY (`project`) REFERENCES `projects`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `favorite_projects_user_idx` ON `favorite_projects` (`user_id`,`project`);--> statement-breakpoint
-- SDKs never see these changes, so they must not move the data revision (the sdk_changes
-- log): a deleted flag was archived (and reported gone) first; lifecycle stages and feature
-- type lifetimes are not in any SDK answer. Same trigger as 0010's otherwise.
DROP TRIGGER IF EXISTS `sdk_changes_from_events`;
--> statement-breakpoint
CREATE TRIGGER `sdk_changes_from_events` AFTER INSERT ON `events`
WHEN NEW.`type` NOT LIKE 'api-token-%'
	AND NEW.`type` NOT LIKE 'user-%'
	AND NEW.`type` NOT LIKE 'role-%'
	AND NEW.`type` NOT LIKE 'public-signup-token-%'
	AND NEW.`type` NOT LIKE 'personal-access-token-%'
	AND NEW.`type` NOT LIKE 'pat-%'
	AND NEW.`type` NOT LIKE 'session-%'
	AND NEW.`type` NOT LIKE 'tag-type-%'
	AND NEW.`type` NOT LIKE 'project-%'
	AND NEW.`type` NOT LIKE 'feature-type-%'
	AND NEW.`type` NOT IN ('feature-favorited', 'feature-unfavorited', 'segment-created',
		'feature-deleted', 'feature-completed', 'feature-uncompleted')
BEGIN
	INSERT INTO `sdk_changes` (`event_id`, `kind`, `feature_name`, `project`, `environment`, `segment_id`)
	VALUES (
		NEW.`id`,
		CASE
			WHEN NEW.`feature_name` IS NOT NULL THEN 'feature'
			WHEN NEW.`type` LIKE 'segment-%' THEN 'segment'
			ELSE 'all'
		END,
		NEW.`feature_name`,
		NEW.`project`,
		CASE WHEN NEW.`feature_name` IS NOT NULL THEN NEW.`environment` END,
		CASE WHEN NEW.`feature_name` IS NULL AND NEW.`type` LIKE 'segment-%'
			THEN coalesce(json_extract(NEW.`data`, '$.id'), json_extract(NEW.`pre_data`, '$.id')) END
	);
	UPDATE `sdk_changes` SET `kind` = 'all', `feature_name` = NULL, `project` = NULL, `environment` = NULL, `segment_id` = NULL
	WHERE NEW.`id` % 1000 = 0
		AND `event_id` = (SELECT max(`event_id`) FROM `sdk_changes` WHERE `event_id` <= NEW.`id` - 10000);
	DELETE FROM `sdk_changes`
	WHERE NEW.`id` % 1000 = 0
		AND `event_id` < (SELECT max(`event_id`) FROM `sdk_changes` WHERE `event_id` <= NEW.`id` - 10000);
END;
