-- The change log behind /api/client/delta and /api/client/streaming: one row per audit event
-- that SDKs can see, keyed by the event id (the data revision), so delta event ids are the
-- revisions the client API already reports. A trigger on `events` writes it: every write
-- that moves the revision records an audit event in the same D1 batch (admin API, imports,
-- the import queue consumer), so the log is written atomically with the change itself and no
-- writer has to remember it.
CREATE TABLE `sdk_changes` (
	`event_id` integer PRIMARY KEY NOT NULL,
	-- 'feature': one flag changed; 'segment': one segment changed; 'all': anything else that may
	-- touch many flags (an import, an unknown event type) or history that was pruned. A client
	-- whose revision is older than an 'all' row gets a full hydration.
	`kind` text NOT NULL,
	`feature_name` text,
	`project` text,
	-- NULL: the change concerns every environment.
	`environment` text,
	`segment_id` integer
);
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
	AND NEW.`type` NOT IN ('feature-favorited', 'feature-unfavorited', 'segment-created')
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
	-- Keep about the last 10,000 events of history: every 1,000th event folds what is older
	-- into one 'all' row, so a client that far behind is hydrated instead of replayed.
	UPDATE `sdk_changes` SET `kind` = 'all', `feature_name` = NULL, `project` = NULL, `environment` = NULL, `segment_id` = NULL
	WHERE NEW.`id` % 1000 = 0
		AND `event_id` = (SELECT max(`event_id`) FROM `sdk_changes` WHERE `event_id` <= NEW.`id` - 10000);
	DELETE FROM `sdk_changes`
	WHERE NEW.`id` % 1000 = 0
		AND `event_id` < (SELECT max(`event_id`) FROM `sdk_changes` WHERE `event_id` <= NEW.`id` - 10000);
END;
