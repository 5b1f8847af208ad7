/** The Drizzle queries of single sign-on: two `settings` rows and the sign-ins under way. */
import { eq, lte } from 'drizzle-orm';
import { d1Statement, runBatch, type Db } from '../../db/client';
import { auditEvent, type Actor, type AuditEvent } from '../../db/events';
import { oidcLogins, settings } from '../../db/schema';
import { sql } from 'drizzle-orm';

/** Unleash Enterprise's settings keys. */
export const OIDC_SETTINGS_KEY = 'unleash.enterprise.auth.oidc';
export const SIMPLE_SETTINGS_KEY = 'unleash.auth.simple';

export async function readSetting(db: Db, name: string): Promise<Record<string, unknown> | undefined> {
  const [row] = await db.select({ content: settings.content }).from(settings).where(eq(settings.name, name)).limit(1);
  const content = row?.content;
  return content !== null && typeof content === 'object' && !Array.isArray(content) ? (content as Record<string, unknown>) : undefined;
}

export async function writeSetting(db: Db, actor: Actor, name: string, content: object, event: AuditEvent): Promise<void> {
  await runBatch(db, [
    db.insert(settings).values({ name, content }).onConflictDoUpdate({ target: settings.name, set: { content } }),
    auditEvent(db, actor, event),
  ]);
}

export type OidcLoginRow = typeof oidcLogins.$inferSelect;

/** Records a sign-in under way; rows past their time go in the same batch. */
export async function insertLogin(db: Db, row: OidcLoginRow, now: string): Promise<void> {
  await runBatch(db, [db.delete(oidcLogins).where(lte(oidcLogins.expiresAt, now)), db.insert(oidcLogins).values(row)]);
}

/** Takes the sign-in of this state: deleted and returned in one statement, so it works once. */
export async function takeLogin(db: Db, stateHash: string): Promise<OidcLoginRow | undefined> {
  const statement = d1Statement(
    db,
    sql`DELETE FROM ${oidcLogins} WHERE ${oidcLogins.stateHash} = ${stateHash}
      RETURNING state_hash AS stateHash, binding_hash AS bindingHash, nonce_hash AS nonceHash,
        sealed_verifier AS sealedVerifier, redirect, expires_at AS expiresAt`,
  );
  const result = await statement.all<OidcLoginRow>();
  return result.results[0];
}
