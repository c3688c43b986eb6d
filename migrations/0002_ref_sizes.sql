ALTER TABLE `artifact_refs` ADD `size_bytes` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- Backfill: every existing reference takes its artifact's size.
UPDATE `artifact_refs` SET `size_bytes` = (SELECT a.`size_bytes` FROM `artifacts` a WHERE a.`tenant_id` = `artifact_refs`.`tenant_id` AND a.`id` = `artifact_refs`.`artifact_id`);
