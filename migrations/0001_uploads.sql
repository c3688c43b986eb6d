CREATE TABLE `uploads` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`user_id` text DEFAULT '' NOT NULL,
	`session_id` text DEFAULT '' NOT NULL,
	`trace_id` text DEFAULT '' NOT NULL,
	`staging_key` text NOT NULL,
	`size_bytes` integer NOT NULL,
	`sha256` text NOT NULL,
	`options` text NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `uploads_expires` ON `uploads` (`expires_at`);