/** Environments: where flags are enabled, each with its own strategies; and their use by projects. */
import type { Db } from '../../db/client';
import type { Actor } from '../../db/events';
import { badRequest, notFound } from '../../http/errors';
import type * as v from 'valibot';
import type { DefaultStrategySchema } from './schema';
import { jsonbOrder } from '../../lib/jsonb-order';
import * as store from './store';

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
      requiredApprovals: null,
      projectCount: row.projectCount,
      apiTokenCount: row.apiTokenCount,
      enabledToggleCount: row.enabledToggleCount,
    })),
  };
}

function environmentShape(row: store.EnvironmentRow) {
  return {
    name: row.name,
    type: row.type,
    sortOrder: row.sortOrder,
    enabled: row.enabled,
    protected: row.protected,
    requiredApprovals: null,
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
      requiredApprovals: null,
      projectApiTokenCount: row.projectApiTokenCount,
      projectEnabledToggleCount: row.projectEnabledToggleCount,
      ...(row.defaultStrategy ? { defaultStrategy: JSON.parse(row.defaultStrategy) as unknown } : {}),
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
