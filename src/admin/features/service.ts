/**
 * A flag itself: creation (the one place that knows what a new flag consists of), its read,
 * metadata (update, patch, stale), name validation, archive, revive and delete for good; and
 * the look-ups that answer Unleash's 404s for the flag's sub-resources (feature-strategies,
 * feature-variants, feature-environments, feature-dependencies, feature-lifecycle, favorites).
 * Every write is one atomic batch ending in its audit event.
 */
import * as v from 'valibot';
import type { Db, Statement } from '../../db/client';
import { runBatch } from '../../db/client';
import { refuseUnlessMaySkipChangeRequestsInProject } from '../../db/change-request-guard';
import type { PermissionHolder } from '../../auth/permissions';
import { auditEvent, type Actor } from '../../db/events';
import { isConstraintViolation, requireProject } from '../../db/lookups';
import type { VariantDoc } from '../../db/schema';
import { ApiError, badRequest, conflict, notFound, validationError } from '../../http/errors';
import type { CreateFeatureRequest, UpdateFeatureRequest, ValidateFeatureNameRequest } from './schema';
import { FLAG_TYPE, PatchFeatureSchema } from './schema';
import { safePattern } from './rules';
import { creatorOf, featureSummary, flagFields, strategyShape, type FeatureRow } from './shapes';
import * as store from './store';
import { linksOf } from '../feature-links/service';

export const FLAG_EXISTS = 'A flag with that name already exists';

/** 409 for a name a flag holds, in Unleash's words, which say when that flag is archived (6.10.1 and 8.2.0). */
function nameTaken(existing: Pick<FeatureRow, 'archivedAt'>): ApiError {
  return conflict(existing.archivedAt !== null ? 'An archived flag with that name already exists' : FLAG_EXISTS);
}

function nowIso(): string {
  return new Date().toISOString();
}

/** Unleash's 403 for an operation the flag's state (its dependencies) does not allow. */
export function invalidOperation(message: string): ApiError {
  return new ApiError(403, 'InvalidOperationError', message);
}

// ---------------------------------------------------------------------------------------
// Lookups that answer Unleash's 404s

/** Unleash's 404 unless the project exists and is not archived, in the flag endpoints' words. */
export async function requireActiveProject(db: Db, projectId: string): Promise<void> {
  await requireProject(db, projectId, `Active project with id ${projectId} does not exist`, { active: true });
}

function noSuchFeature(projectId: string, name: string): ApiError {
  return notFound(`There's no feature named "${name}" in project "${projectId}".`);
}

/** The flag of that name, archived or not, in any project. */
export async function findFeature(db: Db, name: string): Promise<FeatureRow | undefined> {
  return store.findFeature(db, name);
}

/** Names of the environments attached to a project, in environment order (a new flag gets one row in each). */
export async function projectEnvironmentNames(db: Db, projectId: string): Promise<string[]> {
  return store.projectEnvironmentNames(db, projectId);
}

/** Everything of a flag its full answer shows (environments, strategies, segment links, parents, ...), read in one batch. */
export async function featureDetail(db: Db, name: string) {
  return store.featureDetailRows(db, name);
}

/** The feature, which must be in `projectId` (archived ones only when `allowArchived`). */
export async function requireFeature(db: Db, projectId: string, name: string, allowArchived = false): Promise<FeatureRow> {
  const feature = await store.findFeature(db, name);
  if (!feature || feature.project !== projectId || (!allowArchived && feature.archivedAt !== null)) throw noSuchFeature(projectId, name);
  return feature;
}

/**
 * The flag and its row in `environment`. 6.10.1 words the 404 of a missing environment
 * differently per operation: `missing` gives the read operations' own message, or the error
 * an operation answers instead (adding a strategy: 400).
 */
export async function requireFeatureEnvironment(
  db: Db,
  projectId: string,
  name: string,
  environment: string,
  missing: string | ApiError = `Could not find environment ${environment} for feature: ${name}`,
) {
  const feature = await requireFeature(db, projectId, name);
  const featureEnvironment = await store.featureEnvironmentRow(db, name, environment);
  if (!featureEnvironment) throw typeof missing === 'string' ? notFound(missing) : missing;
  return { feature, featureEnvironment };
}

// ---------------------------------------------------------------------------------------
// Creation

export interface NewFeature {
  name: string;
  project: string;
  description: string | null;
  type: string;
  impressionData: boolean;
  stale?: boolean;
}

/**
 * Everything a new feature consists of, as statements for the caller's batch: the feature
 * row, a disabled `feature_environments` row per environment of its project, the `initial`
 * lifecycle stage and the `feature-created` event. Import uses its own idempotent upserts
 * but must leave the same rows behind.
 */
export function createFeatureStatements(
  db: Db,
  actor: Actor,
  feature: NewFeature,
  environmentNames: readonly string[],
  createdAt = nowIso(),
): Statement[] {
  const row = {
    name: feature.name,
    project: feature.project,
    description: feature.description,
    type: feature.type,
    impressionData: feature.impressionData,
    stale: feature.stale ?? false,
    createdAt,
    createdByUserId: actor.userId,
  };
  const statements = store.insertFeature(db, row, environmentNames);
  statements.push(
    auditEvent(db, actor, {
      type: 'feature-created',
      project: feature.project,
      featureName: feature.name,
      // 6.10.1's `data`: the created flag in its own key order (never seen, not archived).
      data: flagFields({ ...row, lastSeenAt: null, archivedAt: null }),
    }),
  );
  return statements;
}

export async function createFeature(db: Db, actor: Actor, projectId: string, body: CreateFeatureRequest) {
  await requireActiveProject(db, projectId);
  const existing = await store.findFeature(db, body.name);
  if (existing) throw nameTaken(existing);
  const environmentNames = await store.projectEnvironmentNames(db, projectId);
  const createdAt = nowIso();
  try {
    await runBatch(
      db,
      createFeatureStatements(
        db,
        actor,
        {
          name: body.name,
          project: projectId,
          description: body.description ?? null,
          type: body.type,
          impressionData: body.impressionData,
        },
        environmentNames,
        createdAt,
      ),
    );
  } catch (error) {
    // Two creations racing for one name: the loser gets the same answer as a sequential one.
    if (isConstraintViolation(error)) throw conflict(FLAG_EXISTS);
    throw error;
  }
  const created = await store.findFeature(db, body.name);
  return featureSummaryForCreate(created!);
}

function featureSummaryForCreate(row: FeatureRow) {
  const { archivedAt: _archivedAt, ...summary } = featureSummary(row);
  return summary;
}

/**
 * Whether a new flag could take this name: URL friendly, not taken (archived flags keep
 * their names) and, given a project, matching that project's naming pattern — Unleash's
 * legacy `validate` checks, in its order and with its messages.
 */
export async function validateNewName(db: Db, body: ValidateFeatureNameRequest): Promise<void> {
  const existing = await store.findFeature(db, body.name);
  if (existing) throw nameTaken(existing);
  if (!body.projectId) return;
  const project = await store.namingPattern(db, body.projectId);
  if (!project?.pattern || safePattern(project.pattern)?.test(body.name) !== false) return;
  const example = project.example ? ` Here's an example of a name that does match the pattern: "${project.example}"."` : '';
  const description = project.description ? ` The pattern's description is: "${project.description}"` : '';
  const message = `The feature flag name "${body.name}" does not match the project's naming pattern: "${project.pattern}".${example}${description}`;
  throw new ApiError(400, 'PatternError', message, [{ message: 'The flag name does not match the pattern.' }]);
}

// ---------------------------------------------------------------------------------------
// Reading one feature

/**
 * `GET /api/admin/projects/:projectId/features/:featureName` in 6.10.1's key order:
 * `environments` first; each environment carries its `variants` only when
 * `variantEnvironments=true` is asked for (sorted by name), and the flag-level `variants` are
 * every environment's merged by name, as Unleash builds them. `links` are the flag's links
 * (8.x; 6.10.1 answers `[]` with its links feature off); `collaborators` are the people who wrote the
 * flag's events, latest first. A person (not an API key) also gets `favorite`.
 */
export async function getFeature(db: Db, projectId: string, name: string, withEnvironmentVariants = false, userId?: number) {
  const feature = await requireFeature(db, projectId, name, true);
  // An archived flag is read through the archive, as 6.10.1 has it (404 here).
  if (feature.archivedAt !== null) throw notFound(`Could not find feature flag with name ${name}`);
  const [detail, favorite, links] = await Promise.all([
    store.featureDetailRows(db, name),
    userId === undefined ? undefined : store.isFavoriteFeature(db, name, userId),
    linksOf(db, name),
  ]);
  const segmentsByStrategy = new Map<string, number[]>();
  for (const link of detail.links) {
    const list = segmentsByStrategy.get(link.strategyId) ?? [];
    list.push(link.segmentId);
    segmentsByStrategy.set(link.strategyId, list);
  }
  const latest = detail.lifecycle.at(-1);
  const merged = new Map<string, VariantDoc>();
  const environments = detail.envRows.map((environment) => {
    const variants = [...environment.variants].sort((a, b) => a.name.localeCompare(b.name));
    for (const variant of variants) merged.set(variant.name, variant);
    return {
      name: environment.name,
      lastSeenAt: environment.lastSeenAt,
      ...(withEnvironmentVariants ? { variants } : {}),
      enabled: environment.enabled,
      yes: environment.yes,
      no: environment.no,
      type: environment.type,
      sortOrder: environment.sortOrder,
      strategies: detail.strategyRows
        .filter((strategy) => strategy.environment === environment.name)
        .map((strategy) => strategyShape(strategy, segmentsByStrategy.get(strategy.id) ?? [])),
    };
  });
  const collaborators = await Promise.all(detail.collaborators.map((user) => creatorOf(user.id, user)));
  return {
    environments,
    name: feature.name,
    // A person's own favourite mark; API keys have none (6.10.1 leaves the key out for them).
    ...(favorite === undefined ? {} : { favorite }),
    impressionData: feature.impressionData,
    description: feature.description,
    project: feature.project,
    stale: feature.stale,
    createdAt: feature.createdAt,
    createdBy: await creatorOf(feature.createdByUserId, detail.creator),
    type: feature.type,
    lastSeenAt: feature.lastSeenAt,
    variants: [...merged.values()],
    archived: feature.archivedAt !== null,
    dependencies: detail.parents.map((link) => ({ feature: link.parent, enabled: link.enabled, variants: link.variants })),
    children: detail.children.map((link) => link.child),
    lifecycle: latest
      ? { stage: latest.stage, ...(latest.status ? { status: latest.status } : {}), enteredStageAt: latest.createdAt }
      : null,
    links,
    collaborators: { users: collaborators },
  };
}

// ---------------------------------------------------------------------------------------
// Metadata

type MetadataChanges = Pick<UpdateFeatureRequest, 'description' | 'type' | 'stale' | 'impressionData'>;

async function applyMetadata(db: Db, actor: Actor, feature: FeatureRow, changes: MetadataChanges) {
  const set: Partial<store.NewFeatureRow> = {};
  if (changes.description !== undefined) set.description = changes.description;
  if (changes.type !== undefined) set.type = changes.type;
  if (changes.impressionData !== undefined) set.impressionData = changes.impressionData;
  if (changes.stale !== undefined) set.stale = changes.stale;
  const statements: Statement[] = [];
  if (Object.keys(set).length > 0) statements.push(store.updateFeature(db, feature.name, set));
  const after = { ...feature, ...set };
  statements.push(
    auditEvent(db, actor, {
      type: 'feature-metadata-updated',
      project: feature.project,
      featureName: feature.name,
      data: featureSummary(after),
      preData: featureSummary(feature),
    }),
  );
  if (changes.stale !== undefined && changes.stale !== feature.stale) {
    statements.push(
      auditEvent(db, actor, {
        type: changes.stale ? 'feature-stale-on' : 'feature-stale-off',
        project: feature.project,
        featureName: feature.name,
      }),
    );
  }
  await runBatch(db, statements);
  return featureSummaryForCreate(after);
}

export async function updateFeature(db: Db, actor: Actor & PermissionHolder, projectId: string, name: string, body: UpdateFeatureRequest) {
  const feature = await requireFeature(db, projectId, name);
  if (body.name !== undefined && body.name !== name) throw badRequest('Cannot change name of feature flag');
  if (body.archived === true) {
    await archiveFeature(db, actor, projectId, name);
    return featureSummaryForCreate({ ...feature, archivedAt: nowIso() });
  }
  return applyMetadata(db, actor, feature, body);
}

const PatchValues = {
  '/description': v.nullable(v.pipe(v.string(), v.maxLength(1000, 'must be at most 1000 characters long'))),
  '/type': FLAG_TYPE,
  '/stale': v.boolean(),
  '/impressionData': v.boolean(),
} as const;

export async function patchFeature(
  db: Db,
  actor: Actor,
  projectId: string,
  name: string,
  operations: v.InferOutput<typeof PatchFeatureSchema>,
) {
  if (operations.some((operation) => operation.path.startsWith('/variants')))
    throw new ApiError(
      403,
      'OperationDeniedError',
      'Changing variants is done via PATCH operation to /api/admin/projects/:project/features/:feature/variants',
    );
  const changes: MetadataChanges = {};
  operations.forEach((operation, index) => {
    // `/project` is ignored, as 6.10.1 ignores it.
    if (!(operation.path in PatchValues)) return;
    const parsed = v.safeParse(PatchValues[operation.path as keyof typeof PatchValues], operation.value);
    if (!parsed.success) {
      throw validationError([
        { path: `/body/${index}/value`, message: `The \`/body/${index}/value\` property is not a valid value for ${operation.path}.` },
      ]);
    }
    const key = operation.path.slice(1) as keyof MetadataChanges;
    Object.assign(changes, { [key]: parsed.output });
  });
  if (typeof changes.description === 'string' && !changes.description.isWellFormed())
    throw badRequest('description must be well-formed text');
  const feature = await requireFeature(db, projectId, name);
  return applyMetadata(db, actor, feature, changes);
}

export async function setStale(db: Db, actor: Actor, projectId: string, names: readonly string[], stale: boolean) {
  await requireActiveProject(db, projectId);
  const unique = [...new Set(names)];
  const rows = await store.featuresByName(db, unique);
  const found = new Set(rows.filter((row) => row.project === projectId && row.archivedAt === null).map((row) => row.name));
  const missing = unique.filter((name) => !found.has(name));
  if (missing.length > 0) throw noSuchFeature(projectId, missing[0]!);
  const statements: Statement[] = [store.setStale(db, unique, stale)];
  for (const name of unique) {
    statements.push(
      auditEvent(db, actor, { type: stale ? 'feature-stale-on' : 'feature-stale-off', project: projectId, featureName: name }),
    );
  }
  await runBatch(db, statements);
}

// ---------------------------------------------------------------------------------------
// Archive and revive

export async function requireNoActiveChildren(db: Db, name: string): Promise<void> {
  const children = await store.activeChildren(db, name);
  if (children.length > 0) throw invalidOperation('You can not archive/delete this feature since other features depend on it.');
}

/**
 * The archive write: archives `feature` only if it is still active and no active feature
 * depends on it — re-checked in SQL, as a dependency added after the handler's check would
 * otherwise hang off an archived parent. The rest of the batch runs only if this batch's
 * stamp is the one stored. Returns whether it archived.
 */
export async function archiveIfUnused(db: Db, actor: Actor, feature: Pick<FeatureRow, 'name' | 'project'>): Promise<boolean> {
  return store.archiveIfUnused(db, actor, feature.name, nowIso(), {
    type: 'feature-archived',
    project: feature.project,
    featureName: feature.name,
  });
}

/** A change request's archive of the flag: the same checks and statements as the direct one. */
export async function archiveFeatureStatements(db: Db, actor: Actor, projectId: string, name: string): Promise<Statement[]> {
  await requireFeature(db, projectId, name);
  await requireNoActiveChildren(db, name);
  return store.archiveStatements(db, actor, name, nowIso(), { type: 'feature-archived', project: projectId, featureName: name });
}

export async function archiveFeature(db: Db, actor: Actor & PermissionHolder, projectId: string, name: string) {
  const feature = await requireFeature(db, projectId, name);
  await refuseUnlessMaySkipChangeRequestsInProject(db, actor, projectId);
  await requireNoActiveChildren(db, name);
  if (!(await archiveIfUnused(db, actor, feature))) {
    // Something changed since the checks: they now say what.
    await requireFeature(db, projectId, name);
    await requireNoActiveChildren(db, name);
    throw conflict(`Feature ${name} changed while it was being archived; try again.`);
  }
}

/**
 * Revives the archived flags among `names` (in `projectId`, when given), each with all its
 * environments disabled, as Unleash does. A name that is not an archived flag is left alone:
 * 8.2.0's bulk revive answers 200 and leaves it as it is (6.10.1 disables a live flag's
 * environments; decisions.md, Archive).
 */
export async function reviveFeatures(db: Db, actor: Actor, names: readonly string[], projectId?: string) {
  const rows = await store.featuresByName(db, [...new Set(names)]);
  const archived = rows.filter((row) => row.archivedAt !== null && (projectId === undefined || row.project === projectId));
  if (archived.length === 0) return;
  const statements = store.revive(
    db,
    archived.map((row) => row.name),
  );
  for (const row of archived) {
    statements.push(auditEvent(db, actor, { type: 'feature-revived', project: row.project, featureName: row.name }));
  }
  await runBatch(db, statements);
}

/** Revives one flag: 404 in Unleash's words when there is no such flag, 200 and no change when it is live. */
export async function reviveFeature(db: Db, actor: Actor, name: string) {
  if (!(await findFeature(db, name))) throw notFound('No feature flag found');
  await reviveFeatures(db, actor, [name]);
}

/**
 * The archived list in 6.10.1's shape and key order: no `archived` (every one is), and
 * `environments` holding where the flag was last seen (`enabled` is always false there, as
 * Unleash's archived query does not read it).
 */
export async function listArchived(db: Db, projectId?: string) {
  const [rows, sightings] = await Promise.all([store.archivedFeatures(db, projectId), store.archivedSightings(db, projectId)]);
  const seen = new Map<string, { name: string; lastSeenAt: string; enabled: boolean }[]>();
  for (const sighting of sightings) {
    const list = seen.get(sighting.featureName) ?? [];
    list.push({ name: sighting.environment, lastSeenAt: sighting.lastSeenAt, enabled: false });
    seen.set(sighting.featureName, list);
  }
  return {
    version: 1,
    features: rows.map((row) => ({
      name: row.name,
      description: row.description,
      type: row.type,
      project: row.project,
      stale: row.stale,
      createdAt: row.createdAt,
      impressionData: row.impressionData,
      lastSeenAt: row.lastSeenAt,
      archivedAt: row.archivedAt,
      environments: seen.get(row.name) ?? [],
    })),
  };
}

export async function deleteArchived(db: Db, actor: Actor, name: string) {
  const feature = await store.findFeature(db, name);
  if (!feature) throw notFound(`Could not find archived feature flag ${name}`);
  // A flag that is not archived is not deleted: 200 with nothing written, as 6.10.1 answers.
  if (feature.archivedAt === null) return;
  const children = await store.activeChildren(db, name);
  if (children.length > 0) throw invalidOperation('You can not archive/delete this feature since other features depend on it.');
  await runBatch(db, [
    ...store.deleteFeature(db, name),
    auditEvent(db, actor, { type: 'feature-deleted', project: feature.project, featureName: name, preData: featureSummary(feature) }),
  ]);
}

/** A disabled `feature_environments` row for every flag of the project (when attaching an environment). */
export function attachEnvironmentToFeatures(db: Db, projectId: string, environment: string): Statement {
  return store.attachEnvironmentToFeatures(db, projectId, environment);
}
