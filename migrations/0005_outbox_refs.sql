ALTER TABLE `outbox` ADD `ref` text;--> statement-breakpoint
CREATE INDEX `outbox_tenant_seq` ON `outbox` (`tenant_id`,`seq`);