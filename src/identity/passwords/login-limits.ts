/**
 * How many wrong passwords an account takes, counted per account AND client address, so that
 * a stranger failing from their own addresses can never lock the owner out of an address that
 * has not been failing (a plain per-account lockout let anyone lock out `admin` with ten wrong
 * passwords). Unleash 6 has no lockout at all; it only counts `loginAttempts`.
 *
 * For a sign-in attempt on account U from address A (`clientKey`: an IPv4 address or an IPv6
 * /64) at time t:
 *
 * 1. A has fewer than ADDRESS_LIMIT (10) wrong passwords for U in the last ADDRESS_WINDOW
 *    (15 min) — the old lockout, now per address: at most 40 guesses an hour per address.
 * 2. When U has had PRESSURE_LIMIT (10) or more wrong passwords in the last PRESSURE_WINDOW
 *    (1 h) from addresses other than A, U is under attack as A sees it: A must also have fewer
 *    than PRESSURED_ADDRESS_LIMIT (3) wrong passwords for U in that hour.
 *
 * An attempt that breaks a rule is refused with the same 401 as a wrong password, after the
 * same work. The right password from an address with no failures for U in the last hour meets
 * both rules, whatever others do. A right password clears A's failures for U; a new password
 * clears all of U's.
 *
 * Bound: in any hour, an attacker with N addresses gets at most 3N + 49 wrong guesses at one
 * account. Guesses made under attack are at most 3 per address (rule 2). Guesses made while
 * not under attack: take the last one in the hour, from address B; before it, the addresses
 * other than B had fewer than 10 in that hour, and B itself at most 40 (rule 1). So 3N + 9 + 40.
 * (The per-address rate limit on /auth/simple/login, 10 a minute, is looser than both.)
 *
 * Every attempt is counted before the password is checked, in one conditional INSERT, so
 * parallel guesses cannot exceed the limits; a right password then deletes the row again.
 */
import { and, eq, gt, lt, ne, sql } from 'drizzle-orm';
import type { Db, Statement } from '../../db/client';
import { loginFailures, users } from '../../db/schema';

const ADDRESS_LIMIT = 10;
const ADDRESS_WINDOW_MS = 15 * 60_000;
const PRESSURE_LIMIT = 10;
const PRESSURED_ADDRESS_LIMIT = 3;
const PRESSURE_WINDOW_MS = 60 * 60_000;

function failuresSince(userId: number, address: string, since: string, sameAddress: boolean) {
  const at = sameAddress ? eq(loginFailures.address, address) : ne(loginFailures.address, address);
  return sql`(SELECT count(*) FROM ${loginFailures} WHERE ${and(eq(loginFailures.userId, userId), at, gt(loginFailures.failedAt, since))})`;
}

/**
 * Counts an attempt on `userId` from `address` as a failure, if the limits allow it; returns
 * whether they did. An id naming no user costs the same statement and answers false.
 */
export async function reserveLoginAttempt(db: Db, userId: number, address: string, now: number): Promise<boolean> {
  const failedAt = new Date(now).toISOString();
  const addressWindow = new Date(now - ADDRESS_WINDOW_MS).toISOString();
  const pressureWindow = new Date(now - PRESSURE_WINDOW_MS).toISOString();
  const rows = await db
    .insert(loginFailures)
    .select(
      db
        .select({
          // drizzle's INSERT … SELECT names every column; NULL lets SQLite number the row.
          id: sql<number>`NULL`.as('id'),
          userId: users.id,
          address: sql<string>`${address}`.as('address'),
          failedAt: sql<string>`${failedAt}`.as('failed_at'),
        })
        .from(users)
        .where(
          and(
            eq(users.id, userId),
            sql`${failuresSince(userId, address, addressWindow, true)} < ${ADDRESS_LIMIT}`,
            sql`(${failuresSince(userId, address, pressureWindow, false)} < ${PRESSURE_LIMIT}
              OR ${failuresSince(userId, address, pressureWindow, true)} < ${PRESSURED_ADDRESS_LIMIT})`,
          ),
        ),
    )
    .returning({ id: loginFailures.id });
  return rows.length > 0;
}

/** A right password from `address`: its failures for the account are forgiven (its row of this attempt too). */
export function forgiveAddressStatement(db: Db, userId: number, address: string): Statement {
  return db.delete(loginFailures).where(and(eq(loginFailures.userId, userId), eq(loginFailures.address, address)));
}

/** A new password: the guesses at the old one no longer count anywhere. */
export function clearFailuresStatement(db: Db, userId: number): Statement {
  return db.delete(loginFailures).where(eq(loginFailures.userId, userId));
}

/** Failures older than the longest window count for nothing (the cron sweep deletes them). */
export function staleFailures(now: Date) {
  return lt(loginFailures.failedAt, new Date(now.getTime() - PRESSURE_WINDOW_MS).toISOString());
}
