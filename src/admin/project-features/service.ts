/**
 * Flag operations on a project as a whole: its flag list, cloning a flag into it, and
 * archiving and deleting many flags at once (all or nothing, with Unleash's refusals). Every
 * write is one D1 batch that ends in its audit events. (Bulk on/off: feature-environments;
 * favourite projects: favorites; parent options: feature-dependencies; lifecycle count and
 * uncomplete: feature-lifecycle.)
 */
import type { Db, Statement } from '../../db/client';
import { runBatch } from '../../db/client';
import { refuseUnlessMaySkipChangeRequestsInProject } from '../../db/change-request-guard';
import type { PermissionHolder } from '../../auth/permissions';
import { auditEvent, type Actor } from '../../db/events';
import { isConstraintViolation } from '../../db/lookups';
import { conflict, notFound, validationError } from '../../http/errors';
import type { Principal } from '../../auth/principal';
import {
  createFeatureStatements,
  featureDetail,
  findFeature,
  FLAG_EXISTS,
  invalidOperation,
  projectEnvironmentNames,
  requireActiveProject,
  validateNewName,
} from '../features/service';
import { strategyEventData } from '../features/shapes';
import { insertLink } from '../feature-dependencies/service';
import { strategyStatements } from '../feature-strategies/service';
import { variantsStatement } from '../feature-variants/service';
import type { ProjectFeaturesQueryInput } from './schema';
import * as store from './store';

// ---------------------------------------------------------------------------------------
// The project's flag list

/** `type:value` pairs of `?tag=` (split at the first colon), or a 400 in Unleash's words. */
function tagFilter(tag: string | string[] | undefined): [string, string][] | undefined {
  if (tag === undefined) return undefined;
  const list = Array.isArray(tag) ? tag : [tag];
  return list.map((item, index) => {
    const colon = item.indexOf(':');
    if (!/\w+:.+/.test(item)) {
      throw validationError([{ message: `"tag[${index}]" with value "${item}" fails to match the tag pattern. You provided "${item}".` }]);
    }
    return [item.slice(0, colon), item.slice(colon + 1)];
  });
}

export async function listFeatures(db: Db, principal: Principal, projectId: string, query: ProjectFeaturesQueryInput) {
  const tags = tagFilter(query.tag);
  // Unleash reports `favorite` only to people; an API key has no favourites.
  const userId = principal.kind === 'user' ? principal.userId : undefined;
  const { featureRows, environmentRows, tagRows, favoriteRows } = await store.featureOverview(
    db,
    { projectId, namePrefix: query.namePrefix, tags },
    userId,
  );
  const favorites = new Set(favoriteRows.map((row) => row.feature));
  const environmentsOf = new Map<string, typeof environmentRows>();
  for (const row of environmentRows) environmentsOf.set(row.feature_name, [...(environmentsOf.get(row.feature_name) ?? []), row]);
  const tagsOf = new Map<string, { value: string; type: string }[]>();
  for (const row of tagRows)
    tagsOf.set(row.feature_name, [...(tagsOf.get(row.feature_name) ?? []), { value: row.tag_value, type: row.tag_type }]);
  return {
    version: 2 as const,
    features: featureRows.map((row) => {
      const environments = (environmentsOf.get(row.name) ?? []).map((environment) => ({
        name: environment.name,
        enabled: environment.enabled === 1,
        type: environment.type,
        sortOrder: environment.sort_order,
        variantCount: environment.variant_count,
        lastSeenAt: environment.last_seen_at,
        hasStrategies: environment.has_strategies === 1,
        hasEnabledStrategies: environment.has_enabled_strategies === 1,
      }));
      // The flag was last seen when any of its environments was.
      const lastSeenAt = environments.reduce<string | null>(
        (latest, environment) =>
          environment.lastSeenAt !== null && (latest === null || environment.lastSeenAt > latest) ? environment.lastSeenAt : latest,
        row.last_seen_at,
      );
      const tagList = tagsOf.get(row.name);
      return {
        type: row.type,
        description: row.description,
        ...(userId === undefined ? {} : { favorite: favorites.has(row.name) }),
        name: row.name,
        createdAt: row.created_at,
        stale: row.stale === 1,
        impressionData: row.impression_data === 1,
        lastSeenAt,
        environments,
        ...(tagList ? { tags: tagList } : {}),
      };
    }),
  };
}

// ---------------------------------------------------------------------------------------
// Cloning

/**
 * Copies flag `source` (any project) as `name` into `projectId`, as Unleash does: metadata
 * (description, type, impression data, stale), each environment's strategies (with their
 * segments; `groupId` renamed unless `replaceGroupId` is false) and variants, and its parent;
 * environments start off. Events: `feature-created`, a `feature-strategy-add` per strategy,
 * `feature-dependency-added`.
 */
export async function cloneFeature(
  db: Db,
  actor: Actor,
  projectId: string,
  source: string,
  body: { name: string; replaceGroupId: boolean },
) {
  // Free, URL friendly and, in a project with a naming pattern, matching it (409 / 400 PatternError).
  await validateNewName(db, { name: body.name, projectId });
  const original = await findFeature(db, source);
  if (!original || original.archivedAt !== null) throw notFound(`Could not find feature flag with name ${source}`);
  await requireActiveProject(db, projectId);
  const [environmentNames, detail] = await Promise.all([projectEnvironmentNames(db, projectId), featureDetail(db, source)]);
  const createdAt = new Date().toISOString();
  const statements: Statement[] = createFeatureStatements(
    db,
    actor,
    {
      name: body.name,
      project: projectId,
      description: original.description,
      type: original.type,
      impressionData: original.impressionData,
      stale: original.stale,
    },
    environmentNames,
    createdAt,
  );
  const environments = new Set(environmentNames);
  for (const environment of detail.envRows) {
    if (!environments.has(environment.name) || environment.variants.length === 0) continue;
    statements.push(variantsStatement(db, body.name, environment.variants, [environment.name]));
  }
  for (const strategy of detail.strategyRows) {
    if (!environments.has(strategy.environment)) continue;
    const parameters = { ...strategy.parameters };
    if (body.replaceGroupId && Object.hasOwn(parameters, 'groupId')) parameters.groupId = body.name;
    const row = {
      ...strategy,
      id: crypto.randomUUID(),
      featureName: body.name,
      projectName: projectId,
      parameters,
      createdAt,
      createdByUserId: actor.userId,
    };
    const segmentIds = detail.links.filter((link) => link.strategyId === strategy.id).map((link) => link.segmentId);
    statements.push(...strategyStatements(db, row, segmentIds));
    statements.push(
      auditEvent(db, actor, {
        type: 'feature-strategy-add',
        project: projectId,
        environment: strategy.environment,
        featureName: body.name,
        data: strategyEventData(row, segmentIds),
      }),
    );
  }
  // Dependencies stay within a project: a parent elsewhere is not carried over.
  const parents = original.project === projectId ? detail.parents : [];
  for (const parent of parents) {
    statements.push(insertLink(db, { parent: parent.parent, child: body.name, enabled: parent.enabled, variants: parent.variants }));
    statements.push(
      auditEvent(db, actor, {
        type: 'feature-dependency-added',
        project: projectId,
        featureName: body.name,
        data: { feature: parent.parent, enabled: parent.enabled, variants: parent.variants },
      }),
    );
  }
  try {
    await runBatch(db, statements);
  } catch (error) {
    if (isConstraintViolation(error)) throw conflict(FLAG_EXISTS);
    throw error;
  }
  return {
    name: body.name,
    description: original.description,
    type: original.type,
    project: projectId,
    stale: original.stale,
    createdAt,
    lastSeenAt: null,
    impressionData: original.impressionData,
    archived: false,
  };
}

// ---------------------------------------------------------------------------------------
// Bulk archive and delete

/** Unleash's refusals shared by bulk archive and delete: a named flag in another project, or a parent left orphaned. */
async function checkBatch(db: Db, projectId: string, names: readonly string[]) {
  const rows = await store.featuresNamed(db, [...new Set(names)]);
  const elsewhere = [...new Set(rows.filter((row) => row.project !== projectId).map((row) => row.project))];
  if (elsewhere.length > 0) {
    throw invalidOperation(
      `The operation could not be completed. The features exist, but the provided project ids ("${elsewhere.join(',')}") does not match the project provided in request URL ("${projectId}").`,
    );
  }
  if ((await store.orphanParents(db, names)).length > 0) {
    throw invalidOperation(
      names.length > 1
        ? 'You can not archive/delete those features since other features depend on them.'
        : 'You can not archive/delete this feature since other features depend on it.',
    );
  }
  return rows;
}

export async function validateArchive(db: Db, names: readonly string[]) {
  const unique = [...new Set(names)];
  const [parentsWithChildFeatures, hasDeletedDependencies] = await Promise.all([
    store.orphanParents(db, unique),
    store.haveDependencies(db, unique),
  ]);
  return { parentsWithChildFeatures, hasDeletedDependencies };
}

/**
 * Archives the named active flags of the project; unknown and already archived names are
 * ignored, as in Unleash. The batch re-checks in SQL that no flag outside the list depends on
 * one inside it, so a dependency added meanwhile leaves nothing archived.
 */
export async function archiveFeatures(db: Db, actor: Actor & PermissionHolder, projectId: string, names: readonly string[]) {
  const rows = await checkBatch(db, projectId, names);
  const active = rows.filter((row) => row.archivedAt === null).map((row) => row.name);
  if (active.length === 0) return;
  await refuseUnlessMaySkipChangeRequestsInProject(db, actor, projectId);
  if (!(await store.archiveUnlessOrphaning(db, actor, projectId, active, new Date().toISOString()))) {
    // Nothing archived: the checks now say why (or someone else archived them first).
    await checkBatch(db, projectId, names);
    const again = await store.featuresNamed(db, active);
    if (again.some((row) => row.archivedAt === null)) throw conflict('The flags changed while they were being archived; try again.');
  }
}

/**
 * Deletes the named archived flags of the project for good; active and unknown names are
 * ignored, as in Unleash. Each deletion records `feature-deleted` with the flag as it was.
 */
export async function deleteFeatures(db: Db, actor: Actor, projectId: string, names: readonly string[]) {
  const rows = await checkBatch(db, projectId, names);
  const eligible = rows.filter((row) => row.archivedAt !== null).map((row) => row.name);
  if (eligible.length === 0) return;
  if (!(await store.deleteUnlessOrphaning(db, actor, projectId, eligible, names))) {
    await checkBatch(db, projectId, names);
  }
}
