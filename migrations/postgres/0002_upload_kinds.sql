ALTER TABLE "uploads" ADD COLUMN "kind" text COLLATE "C" DEFAULT 'put' NOT NULL;--> statement-breakpoint
ALTER TABLE "uploads" ADD COLUMN "multipart_id" text COLLATE "C";--> statement-breakpoint
ALTER TABLE "uploads" ADD COLUMN "part_size" bigint;--> statement-breakpoint
ALTER TABLE "uploads" ADD COLUMN "received_bytes" bigint DEFAULT 0 NOT NULL;