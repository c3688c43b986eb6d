ALTER TABLE `blobs` ADD `pinned_until` integer;--> statement-breakpoint
ALTER TABLE `blobs` ADD `doomed_at` integer;