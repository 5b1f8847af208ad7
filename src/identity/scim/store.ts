/**
 * The Drizzle queries of SCIM Users and of the SCIM settings row. A provisioned person is a
 * `users` row with `scim_id` (its SCIM id) and their SCIM `userName` as `username`. A person
 * the directory deactivated keeps their identity with `deleted_at` set, so every credential
 * check and listing treats them as gone; a deletion (SCIM or by hand) scrubs the identity, so
 * a SCIM resource exists while `scim_id` and `username` are both set.
 */
import { and, asc, count, eq, isNotNull, ne, or, sql, type SQL } from 'drizzle-orm';
import type { Db, Statement } from '../../db/client';
import { auditEvent, type Actor, type AuditEvent } from '../../db/events';
import { roleUser, settings, users } from '../../db/schema';
import { SCIM_SETTINGS_NAME, type ScimSettings } from '../../db/scim';
import type { FilterColumns } from './filter-sql';

const scimUserColumns = {
  id: users.id,
  scimId: users.scimId,
  externalId: users.scimExternalId,
  userName: users.username,
  name: users.name,
  email: users.email,
  deletedAt: users.deletedAt,
  createdAt: users.createdAt,
  updatedAt: users.updatedAt,
};

export interface ScimUserRow {
  id: number;
  scimId: string | null;
  externalId: string | null;
  userName: string | null;
  name: string | null;
  email: string | null;
  deletedAt: string | null;
  createdAt: string;
  updatedAt: string | null;
}

/** What a SCIM client controls of a person. */
export interface UserFields {
  userName: string;
  externalId: string | null;
  name: string | null;
  email: string | null;
  active: boolean;
}

const provisioned = and(isNotNull(users.scimId), isNotNull(users.username));

/** The attributes a Users filter may name. */
export const USER_FILTER: FilterColumns = {
  columns: {
    id: { expr: sql`${users.scimId}`, type: 'string', caseExact: true },
    username: { expr: sql`${users.username}`, type: 'string' },
    externalid: { expr: sql`${users.scimExternalId}`, type: 'string', caseExact: true },
    displayname: { expr: sql`${users.name}`, type: 'string' },
    'name.formatted': { expr: sql`${users.name}`, type: 'string' },
    emails: { expr: sql`${users.email}`, type: 'string', single: { type: 'work', primary: true } },
    'emails.value': { expr: sql`${users.email}`, type: 'string', single: { type: 'work', primary: true } },
    active: { expr: sql`${users.deletedAt} IS NULL`, type: 'boolean' },
  },
};

export async function findScimUser(db: Db, scimId: string): Promise<ScimUserRow | undefined> {
  const [row] = await db
    .select(scimUserColumns)
    .from(users)
    .where(and(eq(users.scimId, scimId), provisioned))
    .limit(1);
  return row;
}

export async function listScimUsers(db: Db, where: SQL | undefined, offset: number, limit: number) {
  const condition = and(provisioned, where);
  const [total] = await db.select({ n: count() }).from(users).where(condition);
  const rows =
    limit === 0 ? [] : await db.select(scimUserColumns).from(users).where(condition).orderBy(asc(users.id)).limit(limit).offset(offset);
  return { total: total?.n ?? 0, rows };
}

/** Anyone (but `exceptId`) holding this userName (compared case-insensitively) or email. */
export async function holdersOf(db: Db, identity: { userName: string; email: string | null }, exceptId?: number) {
  const match = [sql`lower(${users.username}) = ${identity.userName.toLowerCase()}`];
  if (identity.email !== null) match.push(sql`${users.email} = ${identity.email}`);
  return db
    .select({ ...scimUserColumns, isService: users.isService, isSystem: users.isSystem })
    .from(users)
    .where(and(or(...match), exceptId === undefined ? undefined : ne(users.id, exceptId)))
    .limit(3);
}

export async function nextUserId(db: Db): Promise<number> {
  const [row] = await db.select({ next: sql<number>`COALESCE(MAX(${users.id}), 0) + 1` }).from(users);
  return Math.max(row?.next ?? 1, 1);
}

function columnsOf(fields: UserFields, now: string) {
  return {
    username: fields.userName,
    email: fields.email,
    name: fields.name,
    scimExternalId: fields.externalId,
    deletedAt: fields.active ? null : now,
    updatedAt: now,
  };
}

export function insertUserStatements(
  db: Db,
  user: { id: number; scimId: string; createdAt: string },
  fields: UserFields,
  rootRoleId: number,
  actor: Actor,
) {
  return [
    db
      .insert(users)
      .values({
        id: user.id,
        scimId: user.scimId,
        createdAt: user.createdAt,
        createdByUserId: actor.userId,
        ...columnsOf(fields, user.createdAt),
        updatedAt: null,
      }),
    db
      .insert(roleUser)
      .values({ roleId: rootRoleId, userId: user.id, project: 'default', createdAt: user.createdAt, createdByUserId: actor.userId }),
  ] as const;
}

/** Writes the fields; `claim` also makes an existing person the directory's (assumeControlOfExisting). */
export function updateUserStatement(db: Db, id: number, fields: UserFields, now: string, claim?: { scimId: string }) {
  return db
    .update(users)
    .set({ ...columnsOf(fields, now), ...(claim ? { scimId: claim.scimId } : {}) })
    .where(eq(users.id, id));
}

/** A deletion as the admin API does it: the identity scrubbed, the root and project roles gone. */
export function softDeleteStatements(db: Db, id: number, now: string): Statement[] {
  return [
    db
      .update(users)
      .set({ deletedAt: now, name: null, username: null, email: null, passwordHash: null, updatedAt: now })
      .where(eq(users.id, id)),
    db.delete(roleUser).where(eq(roleUser.userId, id)),
  ];
}

export function writeSettingsStatements(db: Db, actor: Actor, content: ScimSettings, event: AuditEvent): Statement[] {
  return [
    db.insert(settings).values({ name: SCIM_SETTINGS_NAME, content }).onConflictDoUpdate({ target: settings.name, set: { content } }),
    auditEvent(db, actor, event),
  ];
}
