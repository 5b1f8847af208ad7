import { and, asc, eq, inArray } from 'drizzle-orm';
import { rowsPerStatement } from '../../db/chunk';
import type { Db } from '../../db/client';
import { publicSignupTokens, publicSignupTokensUser, rolePermission, roles } from '../../db/schema';

const tokenColumns = {
  secret: publicSignupTokens.secret,
  name: publicSignupTokens.name,
  url: publicSignupTokens.url,
  expiresAt: publicSignupTokens.expiresAt,
  enabled: publicSignupTokens.enabled,
  createdAt: publicSignupTokens.createdAt,
  createdBy: publicSignupTokens.createdBy,
  roleId: roles.id,
  roleType: roles.type,
  roleName: roles.name,
  roleDescription: roles.description,
};
export type TokenRow = {
  secret: string;
  name: string;
  url: string | null;
  expiresAt: string;
  enabled: boolean;
  createdAt: string;
  createdBy: string | null;
  roleId: number;
  roleType: string;
  roleName: string;
  roleDescription: string | null;
};

export async function listTokens(db: Db): Promise<TokenRow[]> {
  return db
    .select(tokenColumns)
    .from(publicSignupTokens)
    .innerJoin(roles, eq(roles.id, publicSignupTokens.roleId))
    .orderBy(asc(publicSignupTokens.createdAt), asc(publicSignupTokens.secret));
}

export async function findToken(db: Db, secret: string): Promise<TokenRow | undefined> {
  const [row] = await db
    .select(tokenColumns)
    .from(publicSignupTokens)
    .innerJoin(roles, eq(roles.id, publicSignupTokens.roleId))
    .where(eq(publicSignupTokens.secret, secret))
    .limit(1);
  return row;
}

/** Secrets per `IN (...)` list. */
const SECRETS_PER_QUERY = rowsPerStatement(1, 10);

/** The ids of the users who signed up with each token, in signup order. */
export async function tokenUserIds(db: Db, secrets: readonly string[]): Promise<Map<string, number[]>> {
  const bySecret = new Map<string, number[]>();
  for (let i = 0; i < secrets.length; i += SECRETS_PER_QUERY) {
    const rows = await db
      .select({ secret: publicSignupTokensUser.secret, userId: publicSignupTokensUser.userId })
      .from(publicSignupTokensUser)
      .where(inArray(publicSignupTokensUser.secret, secrets.slice(i, i + SECRETS_PER_QUERY)))
      .orderBy(asc(publicSignupTokensUser.createdAt), asc(publicSignupTokensUser.userId));
    for (const row of rows) {
      const list = bySecret.get(row.secret) ?? [];
      list.push(row.userId);
      bySecret.set(row.secret, list);
    }
  }
  return bySecret;
}

export function insertTokenStatement(db: Db, token: typeof publicSignupTokens.$inferInsert) {
  return db.insert(publicSignupTokens).values(token);
}

export function updateTokenStatement(db: Db, secret: string, changes: { expiresAt?: string; enabled?: boolean }) {
  return db.update(publicSignupTokens).set(changes).where(eq(publicSignupTokens.secret, secret));
}

export function addTokenUserStatement(db: Db, secret: string, userId: number, createdAt: string) {
  return db.insert(publicSignupTokensUser).values({ secret, userId, createdAt });
}

/** Whether the role carries ADMIN (the Admin role, or a root-custom role granted it). */
export async function roleGrantsAdmin(db: Db, id: number): Promise<boolean> {
  const rows = await db
    .select({ permission: rolePermission.permission })
    .from(rolePermission)
    .where(and(eq(rolePermission.roleId, id), eq(rolePermission.permission, 'ADMIN')))
    .limit(1);
  return rows.length > 0;
}
