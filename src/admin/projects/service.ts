/**
 * Projects and the environments attached to them. Open-source Unleash 6 cannot create
 * projects (404); we accept Enterprise's body so that scripts written for it work.
 */
import type { Principal } from '../../auth/principal';
import { revokeCached } from '../../auth/token-records';
import { forgetUser } from '../../auth/user-principal';
import type { Db } from '../../db/client';
import type { DefaultStrategyDoc } from '../../db/schema';
import type { AuditEvent } from '../../db/events';
import type { Env } from '../../env';
import { ApiError, badData, badRequest, conflict, notFound } from '../../http/errors';
import { userImageUrl } from '../../identity/users/service';
import type { AttachEnvironmentInput, CreateProjectInput, UpdateProjectInput } from './schema';
import * as store from './store';
import { environmentExists, projectExists } from '../../db/lookups';

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

/** Unleash's owner entry: the people holding the Owner role, else the system. */
async function ownersOf(rows: readonly store.OwnerRow[]) {
  if (rows.length === 0) return [{ ownerType: 'system' as const }];
  return Promise.all(
    rows.map(async (row) => ({
      ownerType: 'user' as const,
      name: row.name || row.username || row.email,
      email: row.email,
      imageUrl: row.imageUrl || (await userImageUrl(row)),
    })),
  );
}

/**
 * The live projects, or with `archived` the archived ones (the settings page asks), in name
 * order as Unleash lists them. `favorite` (whether the caller made it a favourite) only for a
 * person, as Unleash leaves it out for API tokens.
 */
export async function listProjects(db: Db, principal: Principal, archived: boolean) {
  const person = principal.kind === 'user' ? principal.userId : undefined;
  const [rows, flagCounts, updates, memberCounts, owners, favourites] = await store.listForAdminUi(db, archived, person);
  const favourite = new Set(favourites.map((row) => row.project));
  const flagsOf = new Map(flagCounts.map((row) => [row.project, row]));
  const updatedAt = new Map(updates.map((row) => [row.project, row.lastUpdated]));
  const membersOf = new Map(memberCounts.map((row) => [row.project, row.count]));
  const projects = [];
  for (const row of rows) {
    const flags = flagsOf.get(row.id);
    projects.push({
      name: row.name,
      id: row.id,
      description: row.description,
      health: 100,
      // Unleash 8's name for the same figure, 100 - health; the 6.10.1 UI ignores it.
      technicalDebt: 0,
      ...(person === undefined ? {} : { favorite: favourite.has(row.id) }),
      featureCount: flags?.count ?? 0,
      memberCount: membersOf.get(row.id) ?? 0,
      createdAt: row.createdAt,
      archivedAt: row.archivedAt,
      mode: row.mode,
      lastReportedFlagUsage: flags?.lastUsage ?? null,
      lastUpdatedAt: updatedAt.get(row.id) ?? null,
      // Unleash 8 lists each project's onboarding step too (the overview's); 6.10.1's UI ignores it.
      onboardingStatus: await onboardingStatus(db, row.id),
      owners: await ownersOf(owners.filter((owner) => owner.project === row.id)),
    });
  }
  return { version: 1, projects };
}

/** A project as the create answer gives it. */
async function createdProject(db: Db, id: string) {
  const [rows, count, links] = await store.byIdWithCounts(db, id);
  const row = rows[0]!;
  return projectShape(
    row,
    count[0]?.count ?? 0,
    links.map((link) => link.environment),
  );
}

/** The project's row, or 404 (an archived one only when `archivedToo`). */
async function requireProjectWithCounts(db: Db, id: string, archivedToo = false): Promise<store.ProjectRow> {
  const [rows] = await store.byIdWithCounts(db, id);
  const row = rows[0];
  if (!row || (!archivedToo && row.archivedAt !== null)) throw notFound('No project found');
  return row;
}

const quoted = (names: readonly string[]) => [...new Set(names)].map((name) => `'${name}'`).join(', ');

/**
 * The environments a new project gets change requests in (Unleash Enterprise's create dialog):
 * those chosen, each of which must exist (else Unleash's 400 BadDataError) and be among the
 * project's, with their approvals clamped to 1–10 (1 when absent), as Unleash does; an
 * environment that predefines approvals keeps its own count. Undefined when none were sent.
 */
function chosenChangeRequestEnvironments(
  body: CreateProjectInput,
  allEnvironments: readonly { name: string; requiredApprovals: number | null }[],
  attached: readonly string[],
) {
  if (body.changeRequestEnvironments === undefined) return undefined;
  const known = new Map(allEnvironments.map((environment) => [environment.name, environment]));
  const names = body.changeRequestEnvironments.map((environment) => environment.name);
  const unknown = names.filter((name) => !known.has(name));
  if (unknown.length > 0) throw badData(`These environments do not exist: ${quoted(unknown)}.`);
  const outside = names.filter((name) => !attached.includes(name));
  if (outside.length > 0) throw badData(`These environments are not among the project's environments: ${quoted(outside)}.`);
  const chosen = new Map<string, number>();
  for (const { name, requiredApprovals } of body.changeRequestEnvironments)
    chosen.set(name, known.get(name)?.requiredApprovals ?? Math.min(10, Math.max(1, requiredApprovals ?? 1)));
  // The predefined ones join anyway (predefinedSettings); listed here for the event, as Unleash lists them.
  for (const name of attached) {
    const predefined = known.get(name)?.requiredApprovals;
    if (predefined !== null && predefined !== undefined && !chosen.has(name)) chosen.set(name, predefined);
  }
  return [...chosen].map(([name, requiredApprovals]) => ({ name, requiredApprovals }));
}

export async function createProject(db: Db, principal: Principal, body: CreateProjectInput) {
  if (await projectExists(db, body.id)) throw conflict(`A project with id ${body.id} already exists`);
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
  const changeRequestEnvironments = chosenChangeRequestEnvironments(body, allEnvironments, attached);
  try {
    await store.insertProject(
      db,
      principal,
      { id: body.id, name: body.name, description: body.description ?? null, mode: body.mode, defaultStickiness: body.defaultStickiness },
      attached,
      // As Unleash: the person who creates a project becomes its Owner (an API token is nobody).
      principal.kind === 'user' ? principal.userId : undefined,
      {
        type: 'project-created',
        project: body.id,
        data: { ...body, environments: attached, ...(changeRequestEnvironments ? { changeRequestEnvironments } : {}) },
      },
      changeRequestEnvironments,
    );
  } catch (error) {
    if (error instanceof Error && /UNIQUE|constraint/i.test(`${error.message} ${String(error.cause ?? '')}`)) {
      throw conflict(`A project with id ${body.id} already exists`);
    }
    throw error;
  }
  if (principal.kind === 'user') forgetUser(principal.userId);
  return createdProject(db, body.id);
}

export async function attachEnvironment(db: Db, principal: Principal, projectId: string, body: AttachEnvironmentInput): Promise<void> {
  const [rows] = await store.byIdWithCounts(db, projectId);
  if (!rows[0] || rows[0].archivedAt !== null) throw notFound(`Project=${projectId} does not exist`);
  if (!(await environmentExists(db, body.environment))) throw notFound(`Could not find environment ${body.environment}`);
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

/** What both overviews show; `favorite` is whether the calling person made the project a favourite. */
async function overviewParts(db: Db, principal: Principal, projectId: string) {
  const now = Date.now();
  const current = new Date(now - 30 * DAY_MS).toISOString();
  const past = new Date(now - 60 * DAY_MS).toISOString();
  const person = principal.kind === 'user' ? principal.userId : undefined;
  const [rows, links, typeCounts, created, archived, activity, members, latestEvent, favourite] = await store.overviewRows(
    db,
    projectId,
    current,
    past,
    person,
  );
  const project = rows[0];
  if (!project || project.archivedAt !== null) throw notFound('No project found');
  return {
    project,
    links,
    typeCounts,
    members: members[0]?.count ?? 0,
    favorite: favourite.length > 0,
    updatedAt: latestEvent[0]?.createdAt ?? project.updatedAt ?? project.createdAt,
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
  };
}

/** A project's environments, with the default strategy where one is set. */
function environmentsOf(links: readonly { environment: string; defaultStrategy: DefaultStrategyDoc | null }[]) {
  return links.map((link) =>
    link.defaultStrategy === null || link.defaultStrategy === undefined
      ? { environment: link.environment }
      : { environment: link.environment, defaultStrategy: link.defaultStrategy },
  );
}

/**
 * The head of both overviews, in Unleash's key order. `unleash8` adds what 8.x's `/overview`
 * answers beside 6.10.1's keys (the deprecated overview is gone from 8.x, so it stays 6.10.1's).
 */
function overviewHead(parts: Awaited<ReturnType<typeof overviewParts>>, unleash8 = false) {
  const { project } = parts;
  return {
    stats: parts.stats,
    name: project.name,
    description: project.description,
    mode: project.mode,
    featureLimit: project.featureLimit,
    featureNaming: {
      pattern: project.featureNamingPattern,
      example: project.featureNamingExample,
      description: project.featureNamingDescription,
    },
    // Unleash 8's per-project link templates (none can be set here) and its name for 100 - health.
    ...(unleash8 ? { linkTemplates: [] } : {}),
    defaultStickiness: project.defaultStickiness,
    health: 100,
    ...(unleash8 ? { technicalDebt: 0 } : {}),
    favorite: parts.favorite,
    updatedAt: parts.updatedAt,
    createdAt: project.createdAt,
  };
}

/** The project page's header, stats and settings, in Unleash's key order. */
export async function projectOverview(db: Db, principal: Principal, projectId: string) {
  const parts = await overviewParts(db, principal, projectId);
  return {
    // Unleash 8's keys are always there with `true` (the spread's type cannot say so).
    ...(overviewHead(parts, true) as ReturnType<typeof overviewHead> & { linkTemplates: never[]; technicalDebt: number }),
    onboardingStatus: await onboardingStatus(db, projectId),
    environments: environmentsOf(parts.links),
    featureTypeCounts: parts.typeCounts,
    members: parts.members,
    version: 1,
  };
}

/**
 * `GET /api/admin/projects/:id` (Unleash's deprecated overview): the header of the overview
 * with the project's flags (archived ones with `archived`), each with its environments and
 * tags; `favorite` per flag only for a person.
 */
export async function projectWithFlags(db: Db, principal: Principal, projectId: string, archived: boolean) {
  const parts = await overviewParts(db, principal, projectId);
  const person = principal.kind === 'user' ? principal.userId : undefined;
  const [flags, environmentRows, tagRows, favourites] = await store.flagsOverview(db, projectId, archived, person);
  const environmentsOfFlag = groupBy(environmentRows, (row) => row.featureName);
  const tagsOf = groupBy(tagRows, (row) => row.featureName);
  const favourite = new Set(favourites.map((row) => row.feature));
  const features = flags.map((flag) => {
    const tags = tagsOf.get(flag.name);
    return {
      type: flag.type,
      description: flag.description,
      ...(person === undefined ? {} : { favorite: favourite.has(flag.name) }),
      name: flag.name,
      createdAt: flag.createdAt,
      stale: flag.stale,
      impressionData: flag.impressionData,
      lastSeenAt: flag.lastSeenAt,
      environments: (environmentsOfFlag.get(flag.name) ?? []).map((row) => ({
        name: row.name,
        enabled: row.enabled,
        type: row.type,
        sortOrder: row.sortOrder,
        variantCount: row.variants.length,
        lastSeenAt: row.lastSeenAt,
        hasStrategies: Boolean(row.hasStrategies),
        hasEnabledStrategies: Boolean(row.hasEnabledStrategies),
      })),
      ...(tags ? { tags: tags.map((tag) => ({ value: tag.value, type: tag.type })) } : {}),
    };
  });
  return {
    ...overviewHead(parts),
    environments: environmentsOf(parts.links),
    features,
    members: parts.members,
    version: 1,
  };
}

function groupBy<T>(rows: readonly T[], key: (row: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const row of rows) {
    const list = groups.get(key(row));
    if (list) list.push(row);
    else groups.set(key(row), [row]);
  }
  return groups;
}

// ---------------------------------------------------------------------------------------
// Changing and deleting a project, as Unleash Enterprise does (404 in the open-source build)

/** What the project events carry of a project. */
function projectData(row: store.ProjectRow) {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    mode: row.mode,
    defaultStickiness: row.defaultStickiness,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

/** `PUT /api/admin/projects/:id`: name and description (mode and default stickiness when given). */
export async function updateProject(db: Db, principal: Principal, id: string, body: UpdateProjectInput): Promise<void> {
  const before = await requireProjectWithCounts(db, id, true);
  const changes = {
    name: body.name,
    description: body.description === undefined ? before.description : body.description,
    ...(body.mode === undefined ? {} : { mode: body.mode }),
    ...(body.defaultStickiness === undefined ? {} : { defaultStickiness: body.defaultStickiness }),
  };
  const after = { ...before, ...changes, updatedAt: new Date().toISOString() };
  await store.updateProject(db, principal, id, changes, {
    type: 'project-updated',
    project: id,
    data: projectData(after),
    preData: projectData(before),
  });
}

/** The project every instance has; it cannot be deleted. */
const DEFAULT_PROJECT = 'default';

function invalidOperation(message: string): ApiError {
  return new ApiError(403, 'InvalidOperationError', message);
}

/**
 * `DELETE /api/admin/projects/:id`, Unleash's rules: never `default`, never while it has
 * live flags. Its archived flags, the API tokens scoped to it alone, its environments, role
 * assignments, segments and context fields go with it; tokens of several projects only lose
 * it. A token deleted here stops working at once in this isolate (KV and the isolate cache).
 */
export async function deleteProject(env: Env, db: Db, principal: Principal, id: string): Promise<void> {
  if (id === DEFAULT_PROJECT) throw invalidOperation('You can not delete the default project!');
  await requireProjectWithCounts(db, id, true);
  const [[counts], archivedFlags, dependents, tokens] = await store.deletionRows(db, id);
  if ((counts?.live ?? 0) > 0) throw invalidOperation('You can not delete a project with active feature flags');
  if (dependents.length > 0) {
    throw invalidOperation(
      archivedFlags.length > 1
        ? 'You can not archive/delete those features since other features depend on them.'
        : 'You can not archive/delete this feature since other features depend on it.',
    );
  }
  const flagEvents: AuditEvent[] = archivedFlags.map((flag) => ({
    type: 'feature-deleted',
    project: id,
    featureName: flag.name,
    preData: { name: flag.name, description: flag.description, type: flag.type, project: flag.project, archivedAt: flag.archivedAt },
  }));
  const tokenEvents: AuditEvent[] = tokens.map((token) => ({
    type: 'api-token-deleted',
    environment: token.environment,
    preData: { id: token.id, tokenName: token.tokenName, type: token.type, environment: token.environment, projects: [id] },
  }));
  await store.deleteProject(
    db,
    principal,
    id,
    archivedFlags.map((flag) => flag.name),
    tokens.map((token) => token.secretHash),
    flagEvents,
    tokenEvents,
  );
  await Promise.all(tokens.map((token) => revokeCached(env, 'apikey', token.secretHash)));
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
