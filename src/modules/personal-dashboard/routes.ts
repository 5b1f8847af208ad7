/**
 * The personal dashboard (the UI's start page): the caller's projects and flags, the
 * instance's admins, and per project its latest events, roles and health.
 */
import { and, asc, desc, eq, inArray, isNull, or, sql } from 'drizzle-orm';
import type { RequestContext } from '../../auth/guard';
import { getDb } from '../../db/client';
import { events, favoriteFeatures, features, projects, roles, roleUser, users } from '../../db/schema';
import { notFound } from '../../http/errors';
import { pathParam } from '../../http/params';
import { json } from '../../http/responses';
import { onboardingStatus } from '../projects/routes';
import { publicBaseUrl } from '../../http/base-url';
import { gravatarUrl } from '../users/gravatar';

/** Unleash's gravatar URL for a person (by email, else the given name). */
function imageUrl(seed: string): Promise<string> {
  return gravatarUrl(seed.trim().toLowerCase());
}

export async function dashboard({ env, principal }: RequestContext): Promise<Response> {
  const db = getDb(env);
  const userId = principal.userId;
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
  const admins = await Promise.all(
    adminRows.map(async (admin) => ({
      id: admin.id,
      ...(admin.name ? { name: admin.name } : {}),
      ...(admin.username ? { username: admin.username } : {}),
      ...(admin.email ? { email: admin.email } : {}),
      imageUrl: admin.imageUrl ?? (await imageUrl(admin.email ?? admin.username ?? admin.name ?? '')),
    })),
  );
  return json({
    projects: projectRows.map((row) => ({
      id: row.id,
      name: row.name,
      health: 100,
      memberCount: row.memberCount,
      featureCount: row.featureCount,
    })),
    flags: flagRows,
    projectOwners: [],
    admins,
  });
}

type EventRow = typeof events.$inferSelect;

/** A one-line markdown summary of an event, in the spirit of Unleash's event formatter. */
function summarise(event: EventRow, base: string): string {
  const who = `**${event.createdBy}**`;
  const project = event.project ? ` in project **[${event.project}](${base}/projects/${encodeURIComponent(event.project)})**` : '';
  const flag =
    event.featureName && event.project
      ? `**[${event.featureName}](${base}/projects/${encodeURIComponent(event.project)}/features/${encodeURIComponent(event.featureName)})**`
      : event.featureName
        ? `**${event.featureName}**`
        : '';
  const environment = event.environment ? ` in the **${event.environment}** environment` : '';
  const verbs: Record<string, string> = {
    'feature-created': `created ${flag}`,
    'feature-archived': `archived ${flag}`,
    'feature-revived': `revived ${flag}`,
    'feature-updated': `updated ${flag}`,
    'feature-metadata-updated': `updated ${flag}`,
    'feature-stale-on': `marked ${flag} as stale`,
    'feature-stale-off': `marked ${flag} as not stale`,
    'feature-environment-enabled': `enabled ${flag}${environment}`,
    'feature-environment-disabled': `disabled ${flag}${environment}`,
    'feature-strategy-add': `added a strategy to ${flag}${environment}`,
    'feature-strategy-update': `updated a strategy of ${flag}${environment}`,
    'feature-strategy-remove': `removed a strategy from ${flag}${environment}`,
    'feature-tagged': `tagged ${flag}`,
    'feature-untagged': `untagged ${flag}`,
  };
  return `${who} ${verbs[event.type] ?? `triggered **${event.type}**${flag ? ` for ${flag}` : ''}`}${project}`;
}

export async function project({ request, env, principal }: RequestContext): Promise<Response> {
  const projectId = pathParam(request, 'projectId');
  const db = getDb(env);
  const [found, latest, roleRows, counts] = await db.batch([
    db.select({ id: projects.id }).from(projects).where(eq(projects.id, projectId)).limit(1),
    db.select().from(events).where(eq(events.project, projectId)).orderBy(desc(events.id)).limit(10),
    db
      .select({ id: roles.id, name: roles.name, type: roles.type })
      .from(roleUser)
      .innerJoin(roles, eq(roles.id, roleUser.roleId))
      .where(and(eq(roleUser.userId, principal.userId), eq(roleUser.project, projectId), inArray(roles.type, ['project', 'custom']))),
    db
      .select({
        total: sql<number>`count(*)`,
        stale: sql<number>`coalesce(sum(${features.stale}), 0)`,
        potentiallyStale: sql<number>`coalesce(sum(${features.potentiallyStale} AND NOT ${features.stale}), 0)`,
      })
      .from(features)
      .where(and(eq(features.project, projectId), isNull(features.archivedAt))),
  ]);
  if (found.length === 0) throw notFound(`No project with id "${projectId}" exists.`);
  const base = publicBaseUrl(env, request);
  const total = counts[0]?.total ?? 0;
  const stale = counts[0]?.stale ?? 0;
  const potentiallyStale = counts[0]?.potentiallyStale ?? 0;
  return json({
    latestEvents: await Promise.all(
      latest.map(async (event) => ({
        createdAt: event.createdAt,
        summary: summarise(event, base),
        createdBy: event.createdBy,
        id: event.id,
        createdByImageUrl: await imageUrl(event.createdBy),
      })),
    ),
    onboardingStatus: await onboardingStatus(db, projectId),
    owners: [{ ownerType: 'system' }],
    roles: roleRows,
    insights: {
      avgHealthCurrentWindow: null,
      avgHealthPastWindow: null,
      totalFlags: total,
      potentiallyStaleFlags: potentiallyStale,
      staleFlags: stale,
      activeFlags: total - stale - potentiallyStale,
      health: total === 0 ? 100 : Math.round(((total - stale - potentiallyStale) / total) * 100),
    },
  });
}
