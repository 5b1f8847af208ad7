/**
 * The shared read-model: the look-ups more than one module needs (does this project exist, the
 * root role a user is given, how a strategy's segments are read), written once. Modules do not
 * import each other's stores (docs/architecture.md); what several of them read lives here, so a
 * cross-module read is legal and has one implementation.
 */
import { and, asc, eq, inArray, isNull, sql, type SQL } from 'drizzle-orm';
import { notFound } from '../http/errors';
import type { Db } from './client';
import { environments, featureStrategies, featureStrategySegment, projects, roles } from './schema';

// ---------------------------------------------------------------------------------------
// Projects and environments

type ProjectRow = typeof projects.$inferSelect;

/** Whether a project with this id exists (archived or not). */
export async function projectExists(db: Db, projectId: string): Promise<boolean> {
  const rows = await db.select({ id: projects.id }).from(projects).where(eq(projects.id, projectId)).limit(1);
  return rows.length > 0;
}

/** The project's row unless it is archived or absent. */
async function findActiveProject(db: Db, projectId: string): Promise<ProjectRow | undefined> {
  const [row] = await db
    .select()
    .from(projects)
    .where(and(eq(projects.id, projectId), isNull(projects.archivedAt)))
    .limit(1);
  return row;
}

/**
 * Unleash's 404 unless the project exists. Unleash words it differently per endpoint, so the
 * caller gives the message; `active` refuses an archived project as well.
 */
export async function requireProject(db: Db, projectId: string, message: string, options: { active?: boolean } = {}): Promise<void> {
  const found = options.active ? (await findActiveProject(db, projectId)) !== undefined : await projectExists(db, projectId);
  if (!found) throw notFound(message);
}

/** Whether an environment with this name exists (enabled or not). */
export async function environmentExists(db: Db, name: string): Promise<boolean> {
  const rows = await db.select({ name: environments.name }).from(environments).where(eq(environments.name, name)).limit(1);
  return rows.length > 0;
}

// ---------------------------------------------------------------------------------------
// Roles

/** The role types a user's root role may have: the predefined ones and custom root roles. */
export const ROOT_ROLE_TYPES = ['root', 'root-custom'] as const;

export interface RootRole {
  id: number;
  name: string;
  type: string;
  description: string | null;
}

/** A root (or root-custom) role by id or by name; undefined for a project role or none. */
export async function findRootRole(db: Db, ref: number | string): Promise<RootRole | undefined> {
  const match = typeof ref === 'number' ? eq(roles.id, ref) : eq(roles.name, ref);
  const [row] = await db
    .select({ id: roles.id, name: roles.name, type: roles.type, description: roles.description })
    .from(roles)
    .where(and(match, inArray(roles.type, [...ROOT_ROLE_TYPES])))
    .orderBy(asc(roles.id))
    .limit(1);
  return row;
}

// ---------------------------------------------------------------------------------------
// Strategies, as every reader of a flag's configuration orders them

/** The order of a flag's strategies in every answer: Unleash's sort order, then creation. */
export const STRATEGY_ORDER = [asc(featureStrategies.sortOrder), asc(featureStrategies.createdAt), asc(featureStrategies.id)] as const;

/** The segments used by the strategies `where` picks, as (strategy, segment) links by segment id. */
export function segmentLinksOfStrategies(db: Db, where: SQL | undefined) {
  return db
    .select({ strategyId: featureStrategySegment.featureStrategyId, segmentId: featureStrategySegment.segmentId })
    .from(featureStrategySegment)
    .innerJoin(featureStrategies, eq(featureStrategies.id, featureStrategySegment.featureStrategyId))
    .where(where)
    .orderBy(asc(featureStrategySegment.segmentId));
}

/** Whether D1 answers at all (Unleash 7+'s readiness). */
export async function databaseAnswers(db: Db): Promise<boolean> {
  try {
    await db.run(sql`SELECT 1`);
    return true;
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------------------
// Errors of writes

/**
 * Whether a write failed on a UNIQUE (or primary key) constraint, optionally of one table or
 * column (`'users.email'`, `'personal_access_tokens'`). D1 errors arrive wrapped (drizzle, then
 * D1), so the constraint text may be in any message of the cause chain.
 */
export function isUniqueViolation(error: unknown, on?: string): boolean {
  const wanted = on === undefined ? 'UNIQUE constraint failed' : `UNIQUE constraint failed: ${on}`;
  for (let current: unknown = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth++) {
    if (current.message.includes(wanted)) return true;
    // Older SQLite words a duplicate primary key this way, naming no column.
    if (on === undefined && current.message.includes('PRIMARY KEY')) return true;
  }
  return false;
}

/**
 * Whether a write failed on any SQLite constraint (unique, primary key, foreign key, not null,
 * check). Flag creation answers all of these 409 "already exists": a racing creation is the
 * expected one, and a project or environment removed between the checks and the batch (a
 * foreign-key failure) has always been answered the same way.
 */
export function isConstraintViolation(error: unknown): boolean {
  for (let current: unknown = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth++) {
    if (/UNIQUE constraint failed|SQLITE_CONSTRAINT/.test(current.message)) return true;
  }
  return false;
}
