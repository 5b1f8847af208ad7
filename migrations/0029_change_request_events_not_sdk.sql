-- A change request's own events (drafted, reviewed, approved, commented, ...) change nothing an
-- SDK answer shows: only applying it does, and that writes the flag events. 0023 counted them
-- as 'all' changes, so each moved the SDK revision and sent every open stream a full hydration
-- (and every polling SDK a fresh payload). Skipped now, with the groups' and SCIM's events (a
-- directory syncing members would do the same); the trigger is otherwise 0023's.
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
	AND NEW.`type` NOT LIKE 'service-account-%'
	AND NEW.`type` NOT LIKE 'addon-config-%'
	AND NEW.`type` NOT LIKE 'context-field-%'
	AND NEW.`type` NOT IN ('tag-type-created', 'tag-type-updated')
	AND (NEW.`type` NOT LIKE 'project-%' OR NEW.`type` IN ('project-environment-added', 'project-environment-removed'))
	AND NEW.`type` NOT LIKE 'feature-type-%'
	AND NEW.`type` NOT LIKE 'change-request-%'
	AND NEW.`type` NOT IN ('change-added', 'change-edited', 'change-discarded')
	AND NEW.`type` NOT LIKE 'group-%'
	AND NEW.`type` NOT LIKE 'scim-%'
	AND NEW.`type` NOT IN ('feature-favorited', 'feature-unfavorited', 'segment-created',
		'feature-deleted', 'feature-completed', 'feature-uncompleted',
		'strategy-created', 'strategy-updated', 'strategy-deleted', 'strategy-deprecated', 'strategy-reactivated',
		'tag-created', 'application-created', 'default-strategy-updated', 'scim-users-deleted')
	AND NOT (NEW.`type` LIKE 'setting-%'
		AND coalesce(json_extract(NEW.`data`, '$.id'), json_extract(NEW.`pre_data`, '$.id'))
			IN ('unleash.enterprise.auth.oidc', 'unleash.auth.simple', 'maintenance.mode'))
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
