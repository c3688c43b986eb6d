CREATE TABLE `audit_log` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`at` integer NOT NULL,
	`tenant_id` text DEFAULT '' NOT NULL,
	`action` text NOT NULL,
	`role` text NOT NULL,
	`actor_kind` text NOT NULL,
	`actor_id` text NOT NULL,
	`target` text,
	`details` text,
	`request_id` text
);
--> statement-breakpoint
CREATE INDEX `audit_log_tenant_seq` ON `audit_log` (`tenant_id`,`seq`);--> statement-breakpoint
CREATE INDEX `audit_log_at` ON `audit_log` (`at`);--> statement-breakpoint
ALTER TABLE `api_keys` ADD `operator` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `outbox` ADD `data` text;