/** What the personal dashboard reads: the caller's projects and flags, the admins, a project's latest state. */
import { and, asc, desc, eq, inArray, isNull, or, sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { events, favoriteFeatures, features, projects, roles, roleUser, users } from '../../db/schema';

/** The projects the user is a member of, the flags they created or favourited, and the instance's admins. */
export async function dashboardRows(db: Db, userId: number) {
  const memberOf = db.selectDistinct({ project: roleUser.project }).from(roleUser).where(eq(roleUser.userId, userId));
  const [projectRows, flagRows, adminRows] = await db.batch([
    db
      .select({
        id: projects.id,
        name: projects.name,
        featureCount: sql<number>`(SELECT count(*) FROM features f WHERE f.project = projects.id AND f.archived_at IS NULL)`,
        memberCount: sql<number>`(SELECT count(DISTINCT ru.user_id) FROM role_user ru JOIN roles r ON r.id = ru.role_id
          WHERE ru.project = projects.id AND r.type IN ('project', 'custom'))`,
      })
      .from(projects)
      .where(and(isNull(projects.archivedAt), inArray(projects.id, memberOf)))
      .orderBy(asc(projects.name))
      .limit(100),
    db
      .select({ name: features.name, type: features.type, project: features.project })
      .from(features)
      .where(
        and(
          isNull(features.archivedAt),
          or(
            eq(features.createdByUserId, userId),
            inArray(
              features.name,
              db.select({ feature: favoriteFeatures.feature }).from(favoriteFeatures).where(eq(favoriteFeatures.userId, userId)),
            ),
          ),
        ),
      )
      .orderBy(desc(features.createdAt))
      .limit(100),
    db
      .select({ id: users.id, name: users.name, username: users.username, email: users.email, imageUrl: users.imageUrl })
      .from(users)
      .innerJoin(roleUser, eq(roleUser.userId, users.id))
      .innerJoin(roles, eq(roles.id, roleUser.roleId))
      .where(and(eq(roles.type, 'root'), eq(roles.name, 'Admin'), isNull(users.deletedAt), eq(users.isService, false)))
      .orderBy(asc(users.id)),
  ]);
  return { projectRows, flagRows, adminRows };
}

/** A project's existence, latest events, the user's roles in it and its flag counts. */
export async function projectRows(db: Db, projectId: string, userId: number) {
  const [found, latest, roleRows, counts] = await db.batch([
    db.select({ id: projects.id }).from(projects).where(eq(projects.id, projectId)).limit(1),
    db.select().from(events).where(eq(events.project, projectId)).orderBy(desc(events.id)).limit(10),
    db
      .select({ id: roles.id, name: roles.name, type: roles.type })
      .from(roleUser)
      .innerJoin(roles, eq(roles.id, roleUser.roleId))
      .where(and(eq(roleUser.userId, userId), eq(roleUser.project, projectId), inArray(roles.type, ['project', 'custom']))),
    db
      .select({
        total: sql<number>`count(*)`,
        stale: sql<number>`coalesce(sum(${features.stale}), 0)`,
        potentiallyStale: sql<number>`coalesce(sum(${features.potentiallyStale} AND NOT ${features.stale}), 0)`,
      })
      .from(features)
      .where(and(eq(features.project, projectId), isNull(features.archivedAt))),
  ]);
  return { found: found.length > 0, latest, roleRows, counts: counts[0] };
}
