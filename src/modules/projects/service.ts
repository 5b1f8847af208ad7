/**
 * Projects and the environments attached to them. Open-source Unleash 6 cannot create
 * projects (404); we accept Enterprise's body so that scripts written for it work.
 */
import type { Principal } from '../../auth/principal';
import { forgetUser } from '../../auth/user-principal';
import type { Db } from '../../db/client';
import { badRequest, conflict, notFound } from '../../http/errors';
import type { AttachEnvironmentInput, CreateProjectInput } from './schema';
import * as store from './store';

function projectShape(row: store.ProjectRow, featureCount: number, environmentNames: string[]) {
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

/** The live projects, or with `archived` the archived ones (the settings page asks). */
export async function listProjects(db: Db, archived: boolean) {
  const [rows, counts, links] = await store.listWithCounts(db, archived);
  const countOf = new Map(counts.map((row) => [row.project, row.count]));
  return {
    version: 1,
    projects: rows.map((row) =>
      projectShape(
        row,
        countOf.get(row.id) ?? 0,
        links.filter((link) => link.projectId === row.id).map((link) => link.environment),
      ),
    ),
  };
}

export async function getProject(db: Db, id: string) {
  const [rows, count, links] = await store.byIdWithCounts(db, id);
  const row = rows[0];
  if (!row || row.archivedAt !== null) throw notFound(`Project=${id} does not exist`);
  return projectShape(
    row,
    count[0]?.count ?? 0,
    links.map((link) => link.environment),
  );
}

export async function createProject(db: Db, principal: Principal, body: CreateProjectInput) {
  if (await store.exists(db, body.id)) throw conflict(`A project with id ${body.id} already exists`);
  const allEnvironments = await store.allEnvironments(db);
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
  try {
    await store.insertProject(
      db,
      principal,
      { id: body.id, name: body.name, description: body.description ?? null, mode: body.mode, defaultStickiness: body.defaultStickiness },
      attached,
      // As Unleash: the person who creates a project becomes its Owner (an API token is nobody).
      principal.kind === 'user' ? principal.userId : undefined,
      { type: 'project-created', project: body.id, data: { ...body, environments: attached } },
    );
  } catch (error) {
    if (error instanceof Error && /UNIQUE|constraint/i.test(`${error.message} ${String(error.cause ?? '')}`)) {
      throw conflict(`A project with id ${body.id} already exists`);
    }
    throw error;
  }
  if (principal.kind === 'user') forgetUser(principal.userId);
  return getProject(db, body.id);
}

export async function attachEnvironment(db: Db, principal: Principal, projectId: string, body: AttachEnvironmentInput): Promise<void> {
  await getProject(db, projectId);
  if (!(await store.environmentExists(db, body.environment))) throw notFound(`Could not find environment ${body.environment}`);
  await store.attachEnvironment(db, principal, projectId, body.environment);
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** Unleash's onboarding steps: no flag yet, a flag but no SDK has seen one, or seen. */
export async function onboardingStatus(db: Db, projectId: string) {
  const [seen, first] = await store.onboardingRows(db, projectId);
  if (seen.length > 0) return { status: 'onboarded' };
  if (first.length === 0) return { status: 'onboarding-started' };
  return { status: 'first-flag-created', feature: first[0]!.name };
}

/** The project page's header, stats and settings, in Unleash's key order. */
export async function projectOverview(db: Db, projectId: string) {
  const now = Date.now();
  const current = new Date(now - 30 * DAY_MS).toISOString();
  const past = new Date(now - 60 * DAY_MS).toISOString();
  const [rows, links, typeCounts, created, archived, activity, members, latestEvent] = await store.overviewRows(
    db,
    projectId,
    current,
    past,
  );
  const project = rows[0];
  if (!project || project.archivedAt !== null) throw notFound('No project found');
  return {
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
  };
}

/** Unleash acts as this user for admin API tokens; it has no row in our users table. */
const ADMIN_TOKEN_USER = { id: -42, name: 'Unleash Admin Token User' };

/** Who created the project's live flags (the search page's "Created by" filter). */
export async function flagCreators(db: Db, projectId: string) {
  const creators = await store.flagCreators(db, projectId);
  const answer: { id: number; name: string }[] = [];
  for (const creator of creators) {
    const name = creator.name || creator.username || creator.email;
    if (name) answer.push({ id: creator.userId!, name });
    else if (creator.userId === ADMIN_TOKEN_USER.id) answer.push(ADMIN_TOKEN_USER);
  }
  answer.sort((a, b) => b.id - a.id);
  return answer;
}

/** Whether any flag depends on another (anywhere: Unleash 6 answers for the whole instance). */
export function hasDependencies(db: Db): Promise<boolean> {
  return store.anyDependency(db);
}
