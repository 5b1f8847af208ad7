CREATE TABLE `stat_traffic_usage` (
	`day` text NOT NULL,
	`traffic_group` text NOT NULL,
	`status_code_series` integer NOT NULL,
	`count` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`day`, `traffic_group`, `status_code_series`)
);
