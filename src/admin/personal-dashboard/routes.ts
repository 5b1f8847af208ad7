/**
 * The personal dashboard (the UI's start page): the caller's projects and flags, the
 * instance's admins, and per project its latest events, roles and health.
 */
import { getDb } from '../../db/client';
import type { events } from '../../db/schema';
import { notFound } from '../../http/errors';
import { json } from '../../http/responses';
import { onboardingStatus } from '../projects/service';
import { publicBaseUrl } from '../../http/base-url';
import { authenticated, route, type Route } from '../../http/route';
import { GetPersonalDashboardResponse, GetPersonalDashboardProjectDetailsResponse } from './schema';
import * as store from './store';
import { gravatarUrl } from '../../identity/users/gravatar';

/** Unleash's gravatar URL for a person (by email, else the given name). */
function imageUrl(seed: string): Promise<string> {
  return gravatarUrl(seed.trim().toLowerCase());
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

export const routes: Route[] = [
  route({
    method: 'GET',
    path: '/api/admin/personal-dashboard',
    access: authenticated(),
    tag: 'Unstable',
    operationId: 'getPersonalDashboard',
    summary: "The caller's flags and projects",
    responses: { 200: { description: 'Success', schema: GetPersonalDashboardResponse } },
    handler: async ({ env, principal }) => {
      const db = getDb(env);
      const userId = principal.userId;
      const { projectRows, flagRows, adminRows } = await store.dashboardRows(db, userId);
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
    },
  }),
  route({
    method: 'GET',
    path: '/api/admin/personal-dashboard/:projectId',
    access: authenticated(),
    tag: 'Unstable',
    operationId: 'getPersonalDashboardProjectDetails',
    summary: "The caller's view of one project",
    responses: { 200: { description: 'Success', schema: GetPersonalDashboardProjectDetailsResponse } },
    errors: [400, 404],
    handler: async ({ request, env, principal, params }) => {
      const projectId = params.projectId!;
      const db = getDb(env);
      const { found, latest, roleRows, counts } = await store.projectRows(db, projectId, principal.userId);
      if (!found) throw notFound(`No project with id "${projectId}" exists.`);
      const base = publicBaseUrl(env, request);
      const total = counts?.total ?? 0;
      const stale = counts?.stale ?? 0;
      const potentiallyStale = counts?.potentiallyStale ?? 0;
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
    },
  }),
];
