CREATE TABLE `api_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`secret_hash` text NOT NULL,
	`perms` text NOT NULL,
	`label` text,
	`created_at` integer NOT NULL,
	`revoked_at` integer
);
--> statement-breakpoint
CREATE INDEX `api_keys_tenant` ON `api_keys` (`tenant_id`);--> statement-breakpoint
CREATE TABLE `artifact_refs` (
	`ref_id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`tenant_id` text NOT NULL,
	`artifact_id` text NOT NULL,
	`user_id` text DEFAULT '' NOT NULL,
	`session_id` text DEFAULT '' NOT NULL,
	`trace_id` text DEFAULT '' NOT NULL,
	`mime_type` text NOT NULL,
	`filename` text,
	`meta` text,
	`source` text,
	`created_at` integer NOT NULL,
	`last_accessed_at` integer NOT NULL,
	`expires_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `artifact_refs_scope` ON `artifact_refs` (`tenant_id`,`artifact_id`,`user_id`,`session_id`,`trace_id`);--> statement-breakpoint
CREATE INDEX `artifact_refs_artifact` ON `artifact_refs` (`tenant_id`,`artifact_id`,`created_at`,`ref_id`);--> statement-breakpoint
CREATE INDEX `artifact_refs_tenant_created` ON `artifact_refs` (`tenant_id`,`created_at`,`ref_id`);--> statement-breakpoint
CREATE INDEX `artifact_refs_session_created` ON `artifact_refs` (`tenant_id`,`session_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `artifact_refs_trace_created` ON `artifact_refs` (`tenant_id`,`trace_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `artifact_refs_expires` ON `artifact_refs` (`expires_at`);--> statement-breakpoint
CREATE TABLE `artifacts` (
	`tenant_id` text NOT NULL,
	`id` text NOT NULL,
	`namespace` text NOT NULL,
	`sha256` text NOT NULL,
	`size_bytes` integer NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`tenant_id`, `id`)
);
--> statement-breakpoint
CREATE INDEX `artifacts_sha256` ON `artifacts` (`sha256`);--> statement-breakpoint
CREATE TABLE `blobs` (
	`sha256` text PRIMARY KEY NOT NULL,
	`size_bytes` integer NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `outbox` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`tenant_id` text NOT NULL,
	`type` text NOT NULL,
	`artifact_id` text NOT NULL,
	`scope` text NOT NULL,
	`created_at` integer NOT NULL
);
