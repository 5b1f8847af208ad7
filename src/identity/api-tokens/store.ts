import { asc, eq, inArray, or, sql } from 'drizzle-orm';
import { chunkedInsert } from '../../db/chunk';
import type { Db } from '../../db/client';
import { apiTokenProject, apiTokens, projects } from '../../db/schema';

type ApiTokenRow = typeof apiTokens.$inferSelect;
export type StoredApiToken = ApiTokenRow & { projects: string[] };

export function insertTokenStatements(db: Db, token: typeof apiTokens.$inferInsert, projectIds: readonly string[]) {
  const scoped = projectIds.filter((project) => project !== '*');
  const statements = [db.insert(apiTokens).values(token)] as const;
  const rows = scoped.map((project) => ({ secretHash: token.secretHash, project }));
  const projectInserts = chunkedInsert(rows, 2, (run) => db.insert(apiTokenProject).values(run));
  return [...statements, ...projectInserts];
}

/** The ids among `ids` that name no project. */
export async function missingProjects(db: Db, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .select({ id: projects.id })
    .from(projects)
    .where(inArray(projects.id, [...ids]));
  const found = new Set(rows.map((row) => row.id));
  return ids.filter((id) => !found.has(id));
}

function attachProjects(rows: ApiTokenRow[], links: { secretHash: string; project: string }[]): StoredApiToken[] {
  const byToken = new Map<string, string[]>();
  for (const link of links) {
    const list = byToken.get(link.secretHash) ?? [];
    list.push(link.project);
    byToken.set(link.secretHash, list);
  }
  return rows.map((row) => ({ ...row, projects: byToken.get(row.secretHash) ?? ['*'] }));
}

export async function listTokens(db: Db): Promise<StoredApiToken[]> {
  const [rows, links] = await db.batch([
    db.select().from(apiTokens).orderBy(asc(apiTokens.createdAt), asc(apiTokens.id)),
    // rowid order is insertion order: projects come back in the order they were given.
    db
      .select()
      .from(apiTokenProject)
      .orderBy(sql`rowid`),
  ]);
  return attachProjects(rows, links);
}

/** The tokens with this name (names are not unique), oldest first. */
export async function tokensNamed(db: Db, name: string): Promise<StoredApiToken[]> {
  const [rows, links] = await db.batch([
    db.select().from(apiTokens).where(eq(apiTokens.tokenName, name)).orderBy(asc(apiTokens.createdAt), asc(apiTokens.id)),
    db
      .select()
      .from(apiTokenProject)
      .where(sql`${apiTokenProject.secretHash} IN (SELECT secret_hash FROM api_tokens WHERE token_name = ${name})`)
      .orderBy(sql`rowid`),
  ]);
  return attachProjects(rows, links);
}

/** A token by its public id or by the hash of its secret. */
export async function findToken(db: Db, id: string, secretHash: string): Promise<StoredApiToken | undefined> {
  const [row] = await db
    .select()
    .from(apiTokens)
    .where(or(eq(apiTokens.id, id), eq(apiTokens.secretHash, secretHash)))
    .limit(1);
  if (!row) return undefined;
  const links = await db
    .select()
    .from(apiTokenProject)
    .where(eq(apiTokenProject.secretHash, row.secretHash))
    .orderBy(sql`rowid`);
  return attachProjects([row], links)[0];
}

/**
 * The token of a v2 selector: its stored prefix ends `.v2_<selector>` (secrets.ts). GLOB, not
 * LIKE: a selector may hold `_`, LIKE's wildcard, and none of GLOB's.
 */
export async function findTokenBySelector(db: Db, selector: string): Promise<StoredApiToken | undefined> {
  const [row] = await db
    .select({ secretHash: apiTokens.secretHash })
    .from(apiTokens)
    .where(sql`${apiTokens.secretPrefix} GLOB ${`*.v2_${selector}`}`)
    .limit(1);
  return row ? findToken(db, '', row.secretHash) : undefined;
}

export function deleteTokenStatement(db: Db, secretHash: string) {
  return db.delete(apiTokens).where(eq(apiTokens.secretHash, secretHash));
}

export function updateExpiryStatement(db: Db, secretHash: string, expiresAt: string) {
  return db.update(apiTokens).set({ expiresAt }).where(eq(apiTokens.secretHash, secretHash));
}
