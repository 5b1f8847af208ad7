/**
 * Which operations maintenance mode stops (Unleash's rule): admin-API writes, but not the
 * switch itself. A rule of the admin API's shape, so the switch's module (src/admin/maintenance),
 * which enforces it, and the OpenAPI document, which lists the 503, read it from here.
 */

const WRITES = new Set(['POST', 'PUT', 'DELETE']);

/** The switch's path: its route objects declare it with this, and the switch is never stopped. */
export const MAINTENANCE_PATH = '/api/admin/maintenance';

/** Whether maintenance mode stops this operation. */
export function stoppedByMaintenance(method: string, path: string): boolean {
  return WRITES.has(method) && path.startsWith('/api/admin/') && path !== MAINTENANCE_PATH;
}
