/** The Drizzle queries of environments. */
import { asc, sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { environments } from '../../db/schema';

/** All environments in sort order, with how many projects use each and its enabled flags. */
export function listWithCounts(db: Db) {
  return db
    .select({
      name: environments.name,
      type: environments.type,
      sortOrder: environments.sortOrder,
      enabled: environments.enabled,
      protected: environments.protected,
      projectCount: sql<number>`(SELECT count(*) FROM project_environments pe WHERE pe.environment_name = ${environments.name})`,
      enabledToggleCount: sql<number>`(SELECT count(*) FROM feature_environments fe JOIN features f ON f.name = fe.feature_name
        WHERE fe.environment = ${environments.name} AND fe.enabled = 1 AND f.archived_at IS NULL)`,
    })
    .from(environments)
    .orderBy(asc(environments.sortOrder), asc(environments.name));
}
