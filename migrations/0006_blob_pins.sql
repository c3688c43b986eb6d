CREATE TABLE `blob_pins` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`sha256` text NOT NULL,
	`until` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `blob_pins_sha256` ON `blob_pins` (`sha256`);--> statement-breakpoint
ALTER TABLE `blobs` DROP COLUMN `pinned_until`;