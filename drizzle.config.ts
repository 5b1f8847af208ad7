import { defineConfig } from 'drizzle-kit';

// drizzle-kit only generates SQL here; wrangler applies it (`npm run db:migrate:local`).
export default defineConfig({
  dialect: 'sqlite',
  schema: './src/db/schema.ts',
  out: './migrations',
});
