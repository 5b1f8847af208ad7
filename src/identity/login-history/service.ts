/**
 * The login history (Unleash Enterprise's): every sign-in attempt the service handles, password,
 * OpenID Connect or Cloudflare Access, refused ones with the reason. The name typed or the
 * verified email, how, when, from which address; never a password, code or token.
 */
import type { Db } from '../../db/client';
import type { Actor } from '../../db/events';
import { notFound } from '../../http/errors';
import { sha256Hex } from '../../lib/encoding';
import { log } from '../../log';
import * as store from './store';

/** How a person signed in (Unleash's `auth_type` values; `cloudflare-access` is ours). */
type AuthType = 'simple' | 'oidc' | 'cloudflare-access';

export interface LoginAttempt {
  username: string;
  authType: AuthType;
  /** The caller's address (`CF-Connecting-IP`), when known. */
  ip: string | null;
  /** Absent for a successful sign-in. */
  failureReason?: string | undefined;
  /** One row per value: a Cloudflare Access sign-in is seen on every request it makes. */
  once?: string | undefined;
}

/** The address the request came from, as Cloudflare saw it; null off Cloudflare. */
export function requestAddress(request: Request): string | null {
  return request.headers.get('cf-connecting-ip')?.trim().slice(0, 64) || null;
}

/**
 * Records an attempt. The history must never stop anyone signing in: a failure to write is
 * logged and swallowed.
 */
export async function recordLogin(db: Db, attempt: LoginAttempt): Promise<void> {
  try {
    await store.insertEvent(db, {
      username: attempt.username.slice(0, 320),
      authType: attempt.authType,
      createdAt: new Date().toISOString(),
      successful: attempt.failureReason === undefined,
      ip: attempt.ip,
      failureReason: attempt.failureReason?.slice(0, 500) ?? null,
      dedupeKey: attempt.once === undefined ? null : await sha256Hex(attempt.once),
    });
  } catch (error) {
    log.error('login history not written', { authType: attempt.authType, error });
  }
}

export async function listLogins(db: Db) {
  const rows = await store.listEvents(db);
  return rows.map((row) => ({
    id: row.id,
    username: row.username,
    auth_type: row.authType,
    created_at: row.createdAt,
    successful: row.successful,
    ip: row.ip,
    failure_reason: row.failureReason,
  }));
}

const CSV_COLUMNS = ['id', 'username', 'auth_type', 'created_at', 'successful', 'ip', 'failure_reason'] as const;

/** One CSV field: quoted when needed; a leading `= + - @` is defused so spreadsheets show it as text. */
function csvField(value: string | number | boolean | null): string {
  if (value === null) return '';
  let text = String(value);
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** The download the UI's "Download login history" button asks for (`Accept: text/csv`). */
export async function loginsCsv(db: Db): Promise<string> {
  const events = await listLogins(db);
  const lines = [CSV_COLUMNS.join(','), ...events.map((event) => CSV_COLUMNS.map((column) => csvField(event[column])).join(','))];
  return `${lines.join('\n')}\n`;
}

/** Deletes one attempt; the `login-history-deleted` event names who (not what it said). */
export async function deleteLogin(db: Db, actor: Actor, id: number): Promise<void> {
  if (!(await store.deleteEvent(db, actor, id))) throw notFound(`Could not find login event with id ${id}`);
}

/** Deletes the whole history; the event names who and how many rows went. */
export async function deleteAllLogins(db: Db, actor: Actor): Promise<void> {
  await store.deleteAll(db, actor);
}
