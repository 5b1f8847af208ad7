-- Every audit event an enabled integration listens to gets a delivery row in the same
-- transaction as the event: the integration sees each event once, and none is lost when the
-- request ends before the Queue is fed. Filters as Unleash applies them: the event type must
-- be subscribed; an empty list (or `*` first) of projects or environments means all, and an
-- event without a project or environment passes that filter.
CREATE TRIGGER `addon_deliveries_from_events` AFTER INSERT ON `events`
BEGIN
	INSERT INTO `addon_deliveries` (`addon_id`, `event_id`, `feature_name`)
	SELECT a.`id`, NEW.`id`, NEW.`feature_name` FROM `addons` a
	WHERE a.`enabled` = 1
		AND EXISTS (SELECT 1 FROM json_each(a.`events`) WHERE value = NEW.`type`)
		AND (NEW.`project` IS NULL OR json_array_length(a.`projects`) = 0
			OR json_extract(a.`projects`, '$[0]') = '*'
			OR EXISTS (SELECT 1 FROM json_each(a.`projects`) WHERE value = NEW.`project`))
		AND (NEW.`environment` IS NULL OR json_array_length(a.`environments`) = 0
			OR json_extract(a.`environments`, '$[0]') = '*'
			OR EXISTS (SELECT 1 FROM json_each(a.`environments`) WHERE value = NEW.`environment`));
END;
