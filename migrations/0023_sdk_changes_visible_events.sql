-- The data revision (the sdk_changes log) moves only for writes an SDK answer can show: the
-- flags, their environments, strategies, variants, tags (the client API filters on them),
-- dependencies and segments, and the environments' enabled state. Newly skipped, as no SDK
-- answer contains them: service accounts, the sign-in and maintenance settings, context field
-- and strategy definitions, tag values created, integrations, applications registered by an
-- admin and project default strategies. Newly recorded, as they change what flags SDKs get: a
-- tag type deleted (its tags leave every flag) and an environment attached to or detached from
-- a project (its flags' rows there come or go); 0020 skipped both. The frontend API's allowed
-- origins (setting `unleash.frontend`) still move it: isolates re-read them per revision.
-- SQLite cannot alter a trigger: dropped and created again, the same as 0020's otherwise.
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
