CREATE TABLE `oidc_logins` (
	`state_hash` text PRIMARY KEY NOT NULL,
	`binding_hash` text NOT NULL,
	`nonce_hash` text NOT NULL,
	`sealed_verifier` text NOT NULL,
	`redirect` text NOT NULL,
	`expires_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `oidc_logins_expires_idx` ON `oidc_logins` (`expires_at`);