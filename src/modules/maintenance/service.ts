/**
 * Maintenance mode: while on, the admin API refuses writes (503, Unleash's message) except
 * the switch itself; reads, sign-in and the SDK APIs keep working. Read from D1 on each admin
 * write, so every isolate follows the switch at once.
 */
import type { Db } from '../../db/client';
import type { Actor } from '../../db/events';
import { ApiError } from '../../http/errors';
import type { Maintenance } from './schema';
import * as store from './store';

export const MAINTENANCE_MODE_ENABLED = 'Unleash is currently in maintenance mode.';

export async function getMaintenance(db: Db): Promise<Maintenance> {
  return { enabled: (await store.read(db))?.enabled === true };
}

export async function setMaintenance(db: Db, actor: Actor, body: Maintenance): Promise<void> {
  const existing = await store.read(db);
  const data = { id: store.MAINTENANCE_KEY, enabled: body.enabled };
  await store.write(
    db,
    actor,
    { enabled: body.enabled },
    existing === undefined ? { type: 'setting-created', data } : { type: 'setting-updated', data, preData: existing },
  );
}

const WRITES = new Set(['POST', 'PUT', 'DELETE']);

/** Whether maintenance mode stops this operation: Unleash's rule, admin-API writes but the switch itself. */
export function stoppedByMaintenance(method: string, path: string): boolean {
  return WRITES.has(method) && path.startsWith('/api/admin/') && !path.includes('/maintenance');
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

/** Throws Unleash's 503 for an admin-API write while maintenance mode is on. */
export async function refuseWriteInMaintenance(db: Db, method: string, path: string): Promise<void> {
  if (!stoppedByMaintenance(method, path)) return;
  if ((await getMaintenance(db)).enabled) throw new MaintenanceModeError();
}
