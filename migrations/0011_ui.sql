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
