CREATE TABLE `banners` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`enabled` integer DEFAULT true NOT NULL,
	`message` text NOT NULL,
	`variant` text DEFAULT 'info' NOT NULL,
	`sticky` integer DEFAULT false NOT NULL,
	`icon` text,
	`link` text,
	`link_text` text,
	`dialog_title` text,
	`dialog` text,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL
);
