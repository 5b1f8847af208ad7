-- No change to the database: this migration only brings drizzle-kit back in step.
-- Migrations 0006-0012 were written by hand, so drizzle-kit's record of the schema
-- (meta/_journal.json, meta/*_snapshot.json) stopped at 0005 and `npm run db:generate` wanted to
-- create their tables again. meta/0013_snapshot.json is src/db/schema.ts as 0000-0012 create it
-- (checked table by table: columns, indexes, foreign keys), so drizzle-kit now generates only
-- what changes after this, and numbers it from 0014. The triggers of 0010 and 0011 are not part
-- of drizzle's model; they stay in those migrations.
-- One statement that changes nothing: applyD1Migrations (@cloudflare/vitest-plugin) refuses a
-- file of comments only ("SQL code did not contain a statement").
SELECT 1;
