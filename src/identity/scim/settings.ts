/**
 * SCIM settings (`/api/admin/scim-settings`, as Unleash Enterprise serves them to its UI) and
 * the SCIM token: generated on demand, shown once, kept only as its SHA-256; a new one
 * replaces (revokes) the old at once. Every SCIM request is checked against D1, so revoking or
 * disabling takes effect on the very next request in every isolate.
 */
import type { Env } from '../../env';
import { getDb, runBatch, type Db } from '../../db/client';
import type { Actor } from '../../db/events';
import { readScimSettings, type ScimSettings } from '../../db/scim';
import { keyFromHeader, MAX_KEY_LENGTH } from '../../auth/authenticate';
import { digestsEqual, randomHex } from '../../auth/secrets';
import { sha256Hex } from '../../lib/encoding';
import { ScimError } from './errors';
import { writeSettingsStatements } from './store';

const TOKEN_PREFIX = 'scim_';

export async function settingsAnswer(db: Db) {
  const settings = await readScimSettings(db);
  return { enabled: settings.enabled, assumeControlOfExisting: settings.assumeControlOfExisting, hasToken: settings.tokenHash !== null };
}

export async function saveSettings(db: Db, actor: Actor, change: { enabled: boolean; assumeControlOfExisting?: boolean | undefined }) {
  const before = await readScimSettings(db);
  const after: ScimSettings = {
    ...before,
    enabled: change.enabled,
    assumeControlOfExisting: change.assumeControlOfExisting ?? before.assumeControlOfExisting,
  };
  const shown = (settings: ScimSettings) => ({ enabled: settings.enabled, assumeControlOfExisting: settings.assumeControlOfExisting });
  await runBatch(
    db,
    writeSettingsStatements(db, actor, after, { type: 'scim-settings-updated', data: shown(after), preData: shown(before) }),
  );
}

/** A new token (the old one stops working now); only its hash is stored, and the event names no secret. */
export async function generateToken(db: Db, actor: Actor): Promise<string> {
  const token = `${TOKEN_PREFIX}${randomHex(32)}`;
  const before = await readScimSettings(db);
  await runBatch(
    db,
    writeSettingsStatements(db, actor, { ...before, tokenHash: await sha256Hex(token) }, { type: 'scim-token-generated', data: null }),
  );
  return token;
}

const REFUSED = 'Authorization failure: the SCIM token is missing, wrong or revoked, or SCIM provisioning is disabled.';

/** The settings, for a request that carries the current SCIM token while SCIM is enabled; else 401 in SCIM's shape. */
export async function requireScimClient(env: Env, request: Request): Promise<ScimSettings> {
  const key = keyFromHeader(request);
  if (key === null || key.length > MAX_KEY_LENGTH || !key.isWellFormed()) throw new ScimError(401, REFUSED);
  const settings = await readScimSettings(getDb(env));
  const hash = await sha256Hex(key);
  if (!settings.enabled || settings.tokenHash === null || !digestsEqual(settings.tokenHash, hash)) throw new ScimError(401, REFUSED);
  return settings;
}
