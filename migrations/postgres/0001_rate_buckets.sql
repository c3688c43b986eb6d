CREATE TABLE "rate_buckets" (
	"key" text COLLATE "C" PRIMARY KEY NOT NULL,
	"tokens" double precision NOT NULL,
	"at" bigint NOT NULL,
	"granted" double precision NOT NULL
);
