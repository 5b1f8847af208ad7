/** Environments: where flags are enabled, each with its own strategies; and their use by projects. */
import type { Db } from '../../db/client';
import type { Actor } from '../../db/events';
import { badRequest, conflict, notFound } from '../../http/errors';
import { forgetAllUsers } from '../../auth/user-principal';
import type * as v from 'valibot';
import type { CloneEnvironmentSchema, CreateEnvironmentSchema, DefaultStrategySchema, UpdateEnvironmentSchema } from './schema';
import { jsonbOrder } from '../../lib/jsonb-order';
import type { DefaultStrategyDoc } from '../../db/schema';
import * as store from './store';
import { isUniqueViolation } from '../../db/lookups';

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
      requiredApprovals: row.requiredApprovals,
      projectCount: row.projectCount,
      apiTokenCount: row.apiTokenCount,
      enabledToggleCount: row.enabledToggleCount,
    })),
  };
}

function environmentShape(row: Omit<store.EnvironmentRow, 'createdAt'>) {
  return {
    name: row.name,
    type: row.type,
    sortOrder: row.sortOrder,
    enabled: row.enabled,
    protected: row.protected,
    requiredApprovals: row.requiredApprovals,
  };
}

export async function getEnvironment(db: Db, name: string) {
  const row = await store.byName(db, name);
  if (!row) throw notFound(`Could not find environment with name: ${name}`);
  return environmentShape(row);
}

/** Every environment as a project sees it; `visible` says whether the project uses it (an unknown project uses none). */
export async function projectEnvironments(db: Db, projectId: string) {
  const rows = await store.forProject(db, projectId);
  return {
    version: 1,
    environments: rows.map((row) => ({
      name: row.name,
      type: row.type,
      sortOrder: row.sortOrder,
      enabled: row.enabled,
      protected: row.protected,
      requiredApprovals: row.requiredApprovals,
      projectApiTokenCount: row.projectApiTokenCount,
      projectEnabledToggleCount: row.projectEnabledToggleCount,
      ...(row.defaultStrategy ? { defaultStrategy: JSON.parse(row.defaultStrategy) as DefaultStrategyDoc } : {}),
      visible: Boolean(row.visible),
    })),
  };
}

export async function setEnabled(db: Db, actor: Actor, name: string, enabled: boolean): Promise<void> {
  const row = await store.byName(db, name);
  if (!row) throw notFound(`Could not find environment ${name}`);
  await store.setEnabled(db, actor, name, enabled, {
    type: 'environment-updated',
    environment: name,
    data: { ...environmentShape(row), enabled },
    preData: environmentShape(row),
  });
}

export async function setSortOrder(db: Db, actor: Actor, sortOrder: Record<string, number>): Promise<void> {
  await store.setSortOrder(db, actor, sortOrder, { type: 'environment-updated', data: { sortOrder } });
}

/** Removes the environment from the project; one the project does not use is left as it is (200, as Unleash answers). */
export async function detachFromProject(db: Db, actor: Actor, projectId: string, environment: string): Promise<void> {
  if (!(await store.projectEnvironment(db, projectId, environment))) return;
  await store.detach(db, actor, projectId, environment, { type: 'project-environment-removed', project: projectId, environment });
}

/**
 * The strategy a flag gets when it is first enabled in this environment of the project with
 * none of its own. Unleash accepts only a gradual rollout here.
 */
export async function setDefaultStrategy(
  db: Db,
  actor: Actor,
  projectId: string,
  environment: string,
  body: v.InferOutput<typeof DefaultStrategySchema>,
) {
  if (body.name !== 'flexibleRollout')
    throw badRequest('Only "flexibleRollout" strategy can be used as a default strategy for an environment');
  const attached = await store.projectEnvironment(db, projectId, environment);
  if (!attached) throw notFound(`Could not find environment ${environment} in project ${projectId}`);
  // Stored as sent, in the key order Unleash's jsonb column answers it with.
  const strategy = jsonbOrder({
    name: body.name,
    ...(body.title === undefined ? {} : { title: body.title }),
    ...(body.parameters === undefined ? {} : { parameters: body.parameters }),
    ...(body.constraints === undefined ? {} : { constraints: body.constraints }),
    ...(body.segments === undefined ? {} : { segments: body.segments }),
    ...(body.variants === undefined ? {} : { variants: body.variants }),
  });
  await store.setDefaultStrategy(db, actor, projectId, environment, strategy, {
    type: 'default-strategy-updated',
    project: projectId,
    environment,
    preData: attached.defaultStrategy,
    data: strategy,
  });
  return strategy;
}

/** Where a new environment goes in the list when no sort order is given (Unleash's column default). */
const DEFAULT_SORT_ORDER = 9999;

/**
 * Creates an environment (Unleash Enterprise). It is attached to no project: each project
 * adds it when it wants it, as projects choose their environments.
 */
/** Whether a new environment could take this name: 409 when one has it. */
export async function validateName(db: Db, name: string): Promise<void> {
  if (await store.byName(db, name)) throw conflict(`Environment with name ${name} already exists`);
}

export async function createEnvironment(db: Db, actor: Actor, body: v.InferOutput<typeof CreateEnvironmentSchema>) {
  const taken = () => conflict(`Environment with name ${body.name} already exists`);
  if (await store.byName(db, body.name)) throw taken();
  const row = {
    name: body.name,
    type: body.type,
    sortOrder: body.sortOrder ?? DEFAULT_SORT_ORDER,
    enabled: body.enabled ?? true,
    protected: false,
    requiredApprovals: body.requiredApprovals ?? null,
  };
  const created = environmentShape(row);
  try {
    await store.insert(db, actor, row, { type: 'environment-created', environment: row.name, data: created });
  } catch (error) {
    // A concurrent create of the same name won the primary key: nothing of ours was written.
    if (isUniqueViolation(error)) throw taken();
    throw error;
  }
  return created;
}

async function unprotected(db: Db, name: string, doing: string): Promise<store.EnvironmentRow> {
  const row = await store.byName(db, name);
  if (!row) throw notFound(`Could not find environment with name ${name}`);
  if (row.protected) throw badRequest(`Environment ${name} is protected and cannot be ${doing}`);
  return row;
}

/** Changes an environment's type and sort order; name, enabled and protected stay (Unleash Enterprise). */
export async function updateEnvironment(db: Db, actor: Actor, name: string, body: v.InferOutput<typeof UpdateEnvironmentSchema>) {
  const row = await unprotected(db, name, 'updated');
  const changes = {
    ...(body.type === undefined ? {} : { type: body.type }),
    ...(body.sortOrder === undefined ? {} : { sortOrder: body.sortOrder }),
    // Cleared (null) it predefines nothing for projects that join later; settings already made stay.
    ...(body.requiredApprovals === undefined ? {} : { requiredApprovals: body.requiredApprovals }),
  };
  const updated = { ...row, ...changes };
  await store.update(db, actor, name, changes, {
    type: 'environment-updated',
    environment: name,
    data: environmentShape(updated),
    preData: environmentShape(row),
  });
  return environmentShape(updated);
}

/**
 * Deletes an environment with everything flags had there (their state and strategies), its
 * attachment to projects and the role permissions scoped to it. API keys for it stay, as in
 * Unleash (they then match no flags).
 */
export async function deleteEnvironment(db: Db, actor: Actor, name: string): Promise<void> {
  const row = await unprotected(db, name, 'deleted');
  await store.remove(db, actor, name, { type: 'environment-deleted', environment: name, preData: environmentShape(row) });
  // Roles lost the permissions scoped to this environment: every cached grant is stale.
  forgetAllUsers();
}

/**
 * Clones an environment (Unleash Enterprise): a new environment of the given type, in the
 * chosen projects (none chosen: every project that uses the source), where each of the
 * project's flags gets the state, variants and strategies (segments included) it has in the
 * source; with `clonePermissions` (the default) every role's rights scoped to the source are
 * given for the new one too.
 */
export async function cloneEnvironment(db: Db, actor: Actor, sourceName: string, body: v.InferOutput<typeof CloneEnvironmentSchema>) {
  const source = await store.byName(db, sourceName);
  if (!source) throw notFound(`Could not find environment with name: ${sourceName}`);
  const taken = () => conflict(`Environment with name ${body.name} already exists`);
  if (await store.byName(db, body.name)) throw taken();
  const chosen = [...new Set(body.projects ?? [])];
  if (chosen.length > 0) {
    const found = await store.existingProjects(db, chosen);
    const missing = chosen.filter((id) => !found.has(id));
    if (missing.length > 0) throw badRequest(`Could not find the projects: ${missing.join(', ')}`);
  }
  const projects = chosen.length > 0 ? chosen : await store.projectsUsing(db, sourceName);
  const inProjects = new Set(projects);
  const strategies = (await store.strategiesIn(db, sourceName))
    .filter((row) => inProjects.has(row.project))
    .map((row) => [row.id, crypto.randomUUID()] as const);
  const clonePermissions = body.clonePermissions ?? true;
  const created = {
    name: body.name,
    type: body.type,
    sortOrder: DEFAULT_SORT_ORDER,
    enabled: true,
    protected: false,
    requiredApprovals: null,
  };
  try {
    await store.clone(db, actor, {
      source: sourceName,
      environment: { name: created.name, type: created.type, sortOrder: created.sortOrder, enabled: true, protected: false },
      projects,
      strategies,
      clonePermissions,
      events: [
        { type: 'environment-created', environment: created.name, data: created },
        ...projects.map((project) => ({ type: 'project-environment-added', project, environment: created.name })),
      ],
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw taken();
    throw error;
  }
  // Roles gained rights in the new environment: every cached grant is stale.
  if (clonePermissions) forgetAllUsers();
  return created;
}
