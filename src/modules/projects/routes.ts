/**
 * Projects and the environments attached to them. Open-source Unleash 6 cannot create
 * projects (404); we accept Enterprise's body so that scripts written for it work.
 */
import { and, asc, count, desc, eq, gte, isNotNull, isNull, sql } from 'drizzle-orm';
import * as v from 'valibot';
import { chunkedInsert } from '../../db/chunk';
import { getDb, runBatch, type Statement } from '../../db/client';
import { auditEvent } from '../../db/events';
import { dependentFeatures, environments, events, features, projectEnvironments, projects, roleUser, users } from '../../db/schema';
import { OWNER_ROLE_ID } from '../../auth/roles';
import { forgetUser } from '../../auth/user-principal';
import { badRequest, conflict, notFound } from '../../http/errors';
import { readJsonBody } from '../../http/body';
import { pathParam } from '../../http/params';
import { empty, json } from '../../http/responses';
import { nonBlank, parseInput, text } from '../../http/validation';
import { urlFriendlyName } from '../../http/validation';
import { attachEnvironmentToFeatures } from '../features/service';
import { CREATE_PROJECT, UPDATE_PROJECT } from '../../auth/permissions';
import { admin, authenticated, route, type Route, type AdminContext } from '../../http/route';
import {
  GetProjectsResponse,
  CreateProject201Response,
  GetDeprecatedProjectOverviewResponse,
  GetProjectOverviewResponse,
  GetProjectFlagCreatorsResponse,
  CheckDependenciesExistResponse,
} from './schema';

const CreateProjectSchema = v.object({
  id: urlFriendlyName(100),
  name: nonBlank(255),
  description: v.optional(v.nullable(text(1000))),
  mode: v.optional(
    v.picklist(['open', 'protected', 'private'], 'must be equal to one of the allowed values: "open", "protected", "private"'),
    'open',
  ),
  defaultStickiness: v.optional(nonBlank(100), 'default'),
  environments: v.optional(v.pipe(v.array(nonBlank(100)), v.maxLength(100, 'must have at most 100 items'))),
});

const AttachEnvironmentSchema = v.object({ environment: nonBlank(100) });

type ProjectRow = typeof projects.$inferSelect;

function projectShape(row: ProjectRow, featureCount: number, environmentNames: string[]) {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    health: 100,
    featureCount,
    memberCount: 0,
    createdAt: row.createdAt,
    archivedAt: row.archivedAt,
    mode: row.mode,
    defaultStickiness: row.defaultStickiness,
    environments: environmentNames,
  };
}

/** `?archived=true` lists the archived projects instead of the live ones (the settings page asks). */
export async function list({ request, env }: AdminContext): Promise<Response> {
  const db = getDb(env);
  const archived = new URL(request.url).searchParams.get('archived') === 'true';
  const [rows, counts, links] = await db.batch([
    db
      .select()
      .from(projects)
      .where(archived ? isNotNull(projects.archivedAt) : isNull(projects.archivedAt))
      .orderBy(asc(projects.createdAt), asc(projects.id)),
    db
      .select({ project: features.project, count: sql<number>`count(*)` })
      .from(features)
      .where(isNull(features.archivedAt))
      .groupBy(features.project),
    db
      .select({ projectId: projectEnvironments.projectId, environment: projectEnvironments.environmentName })
      .from(projectEnvironments)
      .innerJoin(environments, eq(environments.name, projectEnvironments.environmentName))
      .orderBy(asc(environments.sortOrder), asc(environments.name)),
  ]);
  const countOf = new Map(counts.map((row) => [row.project, row.count]));
  return json({
    version: 1,
    projects: rows.map((row) =>
      projectShape(
        row,
        countOf.get(row.id) ?? 0,
        links.filter((link) => link.projectId === row.id).map((link) => link.environment),
      ),
    ),
  });
}

async function loadProject(env: AdminContext['env'], id: string) {
  const db = getDb(env);
  const [rows, count, links] = await db.batch([
    db.select().from(projects).where(eq(projects.id, id)).limit(1),
    db
      .select({ count: sql<number>`count(*)` })
      .from(features)
      .where(sql`${features.project} = ${id} AND ${features.archivedAt} IS NULL`),
    db
      .select({ environment: projectEnvironments.environmentName })
      .from(projectEnvironments)
      .innerJoin(environments, eq(environments.name, projectEnvironments.environmentName))
      .where(eq(projectEnvironments.projectId, id))
      .orderBy(asc(environments.sortOrder), asc(environments.name)),
  ]);
  const row = rows[0];
  if (!row || row.archivedAt !== null) throw notFound(`Project=${id} does not exist`);
  return projectShape(
    row,
    count[0]?.count ?? 0,
    links.map((link) => link.environment),
  );
}

export async function get({ request, env }: AdminContext): Promise<Response> {
  return json(await loadProject(env, pathParam(request, 'projectId')));
}

export async function create({
  request,
  env,
  principal,
  body,
}: AdminContext<v.InferOutput<typeof CreateProjectSchema>>): Promise<Response> {
  const db = getDb(env);
  const existing = await db.select({ id: projects.id }).from(projects).where(eq(projects.id, body.id)).limit(1);
  if (existing.length > 0) throw conflict(`A project with id ${body.id} already exists`);
  const allEnvironments = await db.select().from(environments).orderBy(asc(environments.sortOrder), asc(environments.name));
  let attached: string[];
  if (body.environments === undefined) {
    // As Unleash Enterprise: without a list, every enabled environment is attached.
    attached = allEnvironments.filter((environment) => environment.enabled).map((environment) => environment.name);
  } else {
    const known = new Set(allEnvironments.map((environment) => environment.name));
    const missing = body.environments.find((name) => !known.has(name));
    if (missing !== undefined) throw badRequest(`Environment=${missing} does not exist`);
    attached = [...new Set(body.environments)];
  }
  const statements: Statement[] = [
    db.insert(projects).values({
      id: body.id,
      name: body.name,
      description: body.description ?? null,
      mode: body.mode,
      defaultStickiness: body.defaultStickiness,
    }),
  ];
  const attachments = attached.map((environmentName) => ({ projectId: body.id, environmentName }));
  statements.push(...chunkedInsert(attachments, 2, (run) => db.insert(projectEnvironments).values(run)));
  // As Unleash: the person who creates a project becomes its Owner (an API token is nobody).
  if (principal.kind === 'user') {
    statements.push(
      db.insert(roleUser).values({ roleId: OWNER_ROLE_ID, userId: principal.userId, project: body.id, createdByUserId: principal.userId }),
    );
  }
  statements.push(auditEvent(db, principal, { type: 'project-created', project: body.id, data: { ...body, environments: attached } }));
  try {
    await runBatch(db, statements);
  } catch (error) {
    if (error instanceof Error && /UNIQUE|constraint/i.test(`${error.message} ${String(error.cause ?? '')}`)) {
      throw conflict(`A project with id ${body.id} already exists`);
    }
    throw error;
  }
  if (principal.kind === 'user') forgetUser(principal.userId);
  return json(await loadProject(env, body.id), 201, { location: `/api/admin/projects/${encodeURIComponent(body.id)}` });
}

export async function attachEnvironment({
  request,
  env,
  principal,
  body,
}: AdminContext<v.InferOutput<typeof AttachEnvironmentSchema>>): Promise<Response> {
  const projectId = pathParam(request, 'projectId');
  const db = getDb(env);
  await loadProject(env, projectId);
  const found = await db.select({ name: environments.name }).from(environments).where(eq(environments.name, body.environment)).limit(1);
  if (found.length === 0) throw notFound(`Could not find environment ${body.environment}`);
  await runBatch(db, [
    db.insert(projectEnvironments).values({ projectId, environmentName: body.environment }).onConflictDoNothing(),
    // Existing features get a disabled row for the new environment, like new ones do.
    attachEnvironmentToFeatures(db, projectId, body.environment),
    auditEvent(db, principal, { type: 'project-environment-added', project: projectId, environment: body.environment }),
  ]);
  return empty(200);
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** Unleash's onboarding steps: no flag yet, a flag but no SDK has seen one, or seen. */
export async function onboardingStatus(db: ReturnType<typeof getDb>, projectId: string) {
  const [seen, first] = await db.batch([
    db
      .select({ name: features.name })
      .from(features)
      .where(and(eq(features.project, projectId), isNotNull(features.lastSeenAt)))
      .limit(1),
    db
      .select({ name: features.name })
      .from(features)
      .where(and(eq(features.project, projectId), isNull(features.archivedAt)))
      .orderBy(asc(features.createdAt))
      .limit(1),
  ]);
  if (seen.length > 0) return { status: 'onboarded' };
  if (first.length === 0) return { status: 'onboarding-started' };
  return { status: 'first-flag-created', feature: first[0]!.name };
}

/** The project page's header, stats and settings, in Unleash's key order. */
export async function overview({ request, env }: AdminContext): Promise<Response> {
  const projectId = pathParam(request, 'projectId');
  const db = getDb(env);
  const now = Date.now();
  const current = new Date(now - 30 * DAY_MS).toISOString();
  const past = new Date(now - 60 * DAY_MS).toISOString();
  const inProject = eq(features.project, projectId);
  const [rows, links, typeCounts, created, archived, activity, members, latestEvent] = await db.batch([
    db.select().from(projects).where(eq(projects.id, projectId)).limit(1),
    db
      .select({ environment: projectEnvironments.environmentName })
      .from(projectEnvironments)
      .innerJoin(environments, eq(environments.name, projectEnvironments.environmentName))
      .where(eq(projectEnvironments.projectId, projectId))
      .orderBy(asc(environments.sortOrder), asc(environments.name)),
    db
      .select({ type: features.type, count: count() })
      .from(features)
      .where(and(inProject, isNull(features.archivedAt)))
      .groupBy(features.type)
      .orderBy(desc(count()), asc(features.type)),
    db
      .select({
        current: sql<number>`coalesce(sum(${features.createdAt} >= ${current}), 0)`,
        past: sql<number>`coalesce(sum(${features.createdAt} >= ${past} AND ${features.createdAt} < ${current}), 0)`,
      })
      .from(features)
      .where(and(inProject, gte(features.createdAt, past))),
    db
      .select({
        current: sql<number>`coalesce(sum(${features.archivedAt} >= ${current}), 0)`,
        past: sql<number>`coalesce(sum(${features.archivedAt} >= ${past} AND ${features.archivedAt} < ${current}), 0)`,
      })
      .from(features)
      .where(and(inProject, gte(features.archivedAt, past))),
    db
      .select({
        current: sql<number>`coalesce(sum(${events.createdAt} >= ${current}), 0)`,
        past: sql<number>`coalesce(sum(${events.createdAt} < ${current}), 0)`,
      })
      .from(events)
      .where(and(eq(events.project, projectId), gte(events.createdAt, past))),
    db
      .select({ count: sql<number>`count(DISTINCT ${roleUser.userId})` })
      .from(roleUser)
      .where(eq(roleUser.project, projectId)),
    db.select({ createdAt: events.createdAt }).from(events).where(eq(events.project, projectId)).orderBy(desc(events.id)).limit(1),
  ]);
  const project = rows[0];
  if (!project || project.archivedAt !== null) throw notFound('No project found');
  return json({
    stats: {
      avgTimeToProdCurrentWindow: 0,
      createdCurrentWindow: created[0]?.current ?? 0,
      createdPastWindow: created[0]?.past ?? 0,
      archivedCurrentWindow: archived[0]?.current ?? 0,
      archivedPastWindow: archived[0]?.past ?? 0,
      projectActivityCurrentWindow: activity[0]?.current ?? 0,
      projectActivityPastWindow: activity[0]?.past ?? 0,
      projectMembersAddedCurrentWindow: 0,
    },
    name: project.name,
    description: project.description,
    mode: project.mode,
    featureLimit: project.featureLimit,
    featureNaming: {
      pattern: project.featureNamingPattern,
      example: project.featureNamingExample,
      description: project.featureNamingDescription,
    },
    defaultStickiness: project.defaultStickiness,
    health: 100,
    favorite: false,
    updatedAt: latestEvent[0]?.createdAt ?? project.updatedAt ?? project.createdAt,
    createdAt: project.createdAt,
    onboardingStatus: await onboardingStatus(db, projectId),
    environments: links.map((link) => ({ environment: link.environment })),
    featureTypeCounts: typeCounts,
    members: members[0]?.count ?? 0,
    version: 1,
  });
}

/** Unleash acts as this user for admin API tokens; it has no row in our users table. */
const ADMIN_TOKEN_USER = { id: -42, name: 'Unleash Admin Token User' };

/** Who created the project's live flags (the search page's "Created by" filter). */
export async function flagCreators({ request, env }: AdminContext): Promise<Response> {
  const projectId = pathParam(request, 'projectId');
  const db = getDb(env);
  const creators = await db
    .selectDistinct({ userId: features.createdByUserId, name: users.name, username: users.username, email: users.email })
    .from(features)
    .leftJoin(users, eq(users.id, features.createdByUserId))
    .where(and(eq(features.project, projectId), isNull(features.archivedAt), isNotNull(features.createdByUserId)));
  const answer: { id: number; name: string }[] = [];
  for (const creator of creators) {
    const name = creator.name || creator.username || creator.email;
    if (name) answer.push({ id: creator.userId!, name });
    else if (creator.userId === ADMIN_TOKEN_USER.id) answer.push(ADMIN_TOKEN_USER);
  }
  answer.sort((a, b) => b.id - a.id);
  return json(answer);
}

/** Whether any flag depends on another (anywhere: Unleash 6 answers for the whole instance). */
export async function hasDependencies({ env }: AdminContext): Promise<Response> {
  const [row] = await getDb(env).select({ parent: dependentFeatures.parent }).from(dependentFeatures).limit(1);
  return json(row !== undefined);
}

export const routes: Route[] = [
  route({
    method: 'GET',
    path: '/api/admin/projects',
    access: authenticated(),
    tag: 'Projects',
    operationId: 'getProjects',
    summary: 'List projects',
    responses: { 200: { description: 'Success', schema: GetProjectsResponse } },
    errors: [403],
    handler: list,
  }),
  route({
    method: 'POST',
    path: '/api/admin/projects',
    access: admin(CREATE_PROJECT),
    tag: 'Projects',
    operationId: 'createProject',
    summary: 'Create a project',
    body: CreateProjectSchema,
    responses: { 201: { description: 'Created', schema: CreateProject201Response } },
    errors: [400, 403, 409, 413],
    handler: create,
  }),
  route({
    method: 'GET',
    path: '/api/admin/projects/:projectId',
    access: authenticated(),
    tag: 'Projects',
    operationId: 'getDeprecatedProjectOverview',
    summary: 'Get a project with its flags',
    responses: { 200: { description: 'Success', schema: GetDeprecatedProjectOverviewResponse } },
    errors: [400, 404],
    handler: get,
  }),
  route({
    method: 'POST',
    path: '/api/admin/projects/:projectId/environments',
    access: admin(UPDATE_PROJECT, ({ params }) => ({ project: params.projectId })),
    tag: 'Projects',
    operationId: 'addEnvironmentToProject',
    summary: 'Enable an environment in a project',
    body: AttachEnvironmentSchema,
    responses: { 200: { description: 'Success', schema: null } },
    errors: [400, 404, 413],
    handler: attachEnvironment,
  }),
  route({
    method: 'GET',
    path: '/api/admin/projects/:projectId/overview',
    access: authenticated(),
    tag: 'Projects',
    operationId: 'getProjectOverview',
    summary: "A project's overview: settings, environments and counts",
    responses: { 200: { description: 'Success', schema: GetProjectOverviewResponse } },
    errors: [400, 404],
    handler: overview,
  }),
  route({
    method: 'GET',
    path: '/api/admin/projects/:projectId/flag-creators',
    access: authenticated(),
    tag: 'Projects',
    operationId: 'getProjectFlagCreators',
    summary: "List who created a project's flags",
    responses: { 200: { description: 'Success', schema: GetProjectFlagCreatorsResponse } },
    errors: [400],
    handler: flagCreators,
  }),
  route({
    method: 'GET',
    path: '/api/admin/projects/:projectId/dependencies',
    access: authenticated(),
    tag: 'Dependencies',
    operationId: 'checkDependenciesExist',
    summary: 'Whether any flag of the project has dependencies',
    responses: { 200: { description: 'Success', schema: CheckDependenciesExistResponse } },
    errors: [400],
    handler: hasDependencies,
  }),
];
