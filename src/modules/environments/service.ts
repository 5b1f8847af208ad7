/** Environments: where flags are enabled, each with its own strategies. */
import type { Db } from '../../db/client';
import * as store from './store';

/** All environments in sort order, with the counts Unleash 6 reports. */
export async function listEnvironments(db: Db) {
  const rows = await store.listWithCounts(db);
  return {
    version: 1,
    environments: rows.map((row) => ({
      name: row.name,
      type: row.type,
      sortOrder: row.sortOrder,
      enabled: row.enabled,
      protected: row.protected,
      requiredApprovals: null,
      projectCount: row.projectCount,
      enabledToggleCount: row.enabledToggleCount,
    })),
  };
}
