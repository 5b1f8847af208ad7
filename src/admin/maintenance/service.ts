/**
 * Maintenance mode: while on, the admin API refuses writes (503, Unleash's message) except
 * the switch itself; reads, sign-in and the SDK APIs keep working. An isolate reads the switch
 * from D1 at most once per revision tick (SDK_REVISION_CHECK_MS, 1 s by default) for the admin
 * writes it guards, and at once after it flipped the switch itself: another isolate follows a
 * switch within that tick.
 */
import { getDb, type Db } from '../../db/client';
import { baseCheckInterval } from '../../db/coherence';
import type { Env } from '../../env';
import type { Actor } from '../../db/events';
import { ApiError } from '../../http/errors';
import { stoppedByMaintenance } from '../../http/maintenance';
import type { Maintenance } from './schema';
import * as store from './store';

const MAINTENANCE_MODE_ENABLED = 'Unleash is currently in maintenance mode.';

export async function getMaintenance(db: Db): Promise<Maintenance> {
  return { enabled: (await store.read(db))?.enabled === true };
}

export async function setMaintenance(db: Db, actor: Actor, body: Maintenance): Promise<void> {
  const existing = await store.read(db);
  const data = { id: store.MAINTENANCE_KEY, enabled: body.enabled };
  known = undefined;
  await store.write(
    db,
    actor,
    { enabled: body.enabled },
    existing === undefined ? { type: 'setting-created', data } : { type: 'setting-updated', data, preData: existing },
  );
}

/** Unleash's refusal while maintenance mode is on: its body is only `{ message }`, not the usual error body. */
class MaintenanceModeError extends ApiError {
  constructor() {
    super(503, 'MaintenanceModeError', MAINTENANCE_MODE_ENABLED);
  }

  override toJSON(): Record<string, unknown> {
    return { message: this.message };
  }
}

/** The switch as this isolate last read it for the guard, and when. */
let known: { enabled: boolean; readAt: number } | undefined;

/** Throws Unleash's 503 for an admin-API write while maintenance mode is on. */
export async function refuseWriteInMaintenance(env: Env, method: string, path: string, now = Date.now()): Promise<void> {
  if (!stoppedByMaintenance(method, path)) return;
  if (known === undefined || now - known.readAt >= baseCheckInterval(env)) {
    known = { enabled: (await getMaintenance(getDb(env))).enabled, readAt: now };
  }
  if (known.enabled) throw new MaintenanceModeError();
}
