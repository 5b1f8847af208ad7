-- What Unleash's admin UI needs beyond the API data: the instance's id (shown in ui-config
-- and the instance statistics) and which splash screens each person has seen.
CREATE TABLE `settings` (
	`name` text PRIMARY KEY NOT NULL,
	`content` text NOT NULL
);
--> statement-breakpoint
INSERT INTO `settings` (`name`, `content`) VALUES ('instanceInfo', json_object('id',
  lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' || substr(lower(hex(randomblob(2))), 2) || '-' ||
  substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' || lower(hex(randomblob(6)))));
--> statement-breakpoint
CREATE TABLE `user_splash` (
	`user_id` integer NOT NULL,
	`splash_id` text NOT NULL,
	`seen` integer DEFAULT false NOT NULL,
	PRIMARY KEY(`user_id`, `splash_id`)
);
--> statement-breakpoint
-- Search sorted by "last seen", newest first, at 100k flags ranked every flag by a key computed
-- from its environments. A flag's own last_seen_at becomes that key, kept by triggers: it is
-- never older than any of its environments' (whatever writes them), so the newest-first order
-- is the order of this column and reads straight from an index.
UPDATE `features` SET `last_seen_at` = (SELECT max(fe.`last_seen_at`) FROM `feature_environments` fe WHERE fe.`feature_name` = `features`.`name`)
WHERE EXISTS (SELECT 1 FROM `feature_environments` fe WHERE fe.`feature_name` = `features`.`name` AND fe.`last_seen_at` > coalesce(`features`.`last_seen_at`, ''));
--> statement-breakpoint
CREATE TRIGGER `feature_environments_seen_insert` AFTER INSERT ON `feature_environments` WHEN NEW.`last_seen_at` IS NOT NULL
BEGIN
	UPDATE `features` SET `last_seen_at` = NEW.`last_seen_at` WHERE `name` = NEW.`feature_name` AND (`last_seen_at` IS NULL OR `last_seen_at` < NEW.`last_seen_at`);
END;
--> statement-breakpoint
CREATE TRIGGER `feature_environments_seen_update` AFTER UPDATE OF `last_seen_at` ON `feature_environments` WHEN NEW.`last_seen_at` IS NOT NULL
BEGIN
	UPDATE `features` SET `last_seen_at` = NEW.`last_seen_at` WHERE `name` = NEW.`feature_name` AND (`last_seen_at` IS NULL OR `last_seen_at` < NEW.`last_seen_at`);
END;
--> statement-breakpoint
CREATE INDEX `features_archived_last_seen_idx` ON `features` (`archived_at`, `last_seen_at` DESC, `created_at`, `name`);
