ALTER TABLE `uploads` ADD `kind` text DEFAULT 'put' NOT NULL;--> statement-breakpoint
ALTER TABLE `uploads` ADD `multipart_id` text;--> statement-breakpoint
ALTER TABLE `uploads` ADD `part_size` integer;--> statement-breakpoint
ALTER TABLE `uploads` ADD `received_bytes` integer DEFAULT 0 NOT NULL;