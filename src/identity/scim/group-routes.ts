/** SCIM Groups: built on the groups tables once they exist (see the groups module). */
import type { Route } from '../../http/route';

export function groupRoutes(_prefix: string, _suffix: string): Route[] {
  return [];
}
