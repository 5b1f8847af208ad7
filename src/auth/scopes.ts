/**
 * Scopes that the path names only indirectly: the project of the flag or segment a path
 * parameter names. A flag or segment that does not exist has no project; the permission is
 * then checked root-wide and the handler answers 404.
 */
import { eq } from 'drizzle-orm';
import { getDb } from '../db/client';
import { features, segments } from '../db/schema';
import type { Scope, ScopeInput } from '../http/route';

/** The project of the feature flag named by path parameter `name`. */
export function featureProject(name: string) {
  return async ({ params, env }: ScopeInput): Promise<Scope> => {
    const feature = params[name];
    if (feature === undefined) return {};
    const [row] = await getDb(env).select({ project: features.project }).from(features).where(eq(features.name, feature)).limit(1);
    return { project: row?.project };
  };
}

/** The project of the segment whose id is path parameter `name` (global segments have none). */
export function segmentProject(name: string) {
  return async ({ params, env }: ScopeInput): Promise<Scope> => {
    const id = params[name];
    if (id === undefined || !/^\d{1,9}$/.test(id)) return {};
    const [row] = await getDb(env)
      .select({ project: segments.segmentProjectId })
      .from(segments)
      .where(eq(segments.id, Number(id)))
      .limit(1);
    return { project: row?.project ?? undefined };
  };
}
