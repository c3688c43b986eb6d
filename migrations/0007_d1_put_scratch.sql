CREATE TABLE `evict_plan` (
	`ref_id` integer PRIMARY KEY NOT NULL,
	`pass` integer NOT NULL,
	`size_bytes` integer NOT NULL,
	`tenant_id` text NOT NULL,
	`artifact_id` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `put_ctx` (
	`id` integer PRIMARY KEY NOT NULL,
	`now` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`live` integer NOT NULL,
	`pin_ok` integer NOT NULL,
	`collision` integer NOT NULL,
	`sess_n` integer NOT NULL,
	`sess_bytes` integer NOT NULL,
	`trace_n` integer NOT NULL,
	`trace_bytes` integer NOT NULL,
	`tenant_after` integer,
	`refused` text,
	CONSTRAINT "put_ctx_one_row" CHECK("put_ctx"."id" = 1)
);
