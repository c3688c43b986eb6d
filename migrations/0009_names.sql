CREATE TABLE `names` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`tenant_id` text NOT NULL,
	`app` text NOT NULL,
	`user_id` text NOT NULL,
	`session_id` text DEFAULT '' NOT NULL,
	`name` text NOT NULL,
	`next_version` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `names_key` ON `names` (`tenant_id`,`app`,`user_id`,`session_id`,`name`);--> statement-breakpoint
DROP INDEX `artifact_refs_scope`;--> statement-breakpoint
ALTER TABLE `artifact_refs` ADD `name` text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE `artifact_refs` ADD `version` integer DEFAULT -1 NOT NULL;--> statement-breakpoint
CREATE INDEX `artifact_refs_name` ON `artifact_refs` (`tenant_id`,`user_id`,`session_id`,`name`,`version`);--> statement-breakpoint
CREATE UNIQUE INDEX `artifact_refs_scope` ON `artifact_refs` (`tenant_id`,`artifact_id`,`user_id`,`session_id`,`trace_id`,`name`,`version`);