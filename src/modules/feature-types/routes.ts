/** Feature flag types, in the order Unleash lists them (the create-flag form's choices). */
import { sql } from 'drizzle-orm';
import type { RequestContext } from '../../auth/guard';
import { getDb } from '../../db/client';
import { featureTypes } from '../../db/schema';
import { json } from '../../http/responses';

export async function list({ env }: RequestContext): Promise<Response> {
  // Seed order (release, experiment, operational, kill-switch, permission), as Unleash's.
  const rows = await getDb(env)
    .select()
    .from(featureTypes)
    .orderBy(sql`rowid`);
  return json({
    version: 1,
    types: rows.map((row) => ({ id: row.id, name: row.name, description: row.description, lifetimeDays: row.lifetimeDays })),
  });
}
