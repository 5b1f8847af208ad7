/**
 * Features: creation (the one place that knows what a new feature consists of), metadata,
 * archive/revive, stale, environments on/off, strategies, environment variants, favourites,
 * dependencies and lifecycle. Every write is one atomic batch ending in its audit event.
 */
import { and, eq, isNull, sql } from 'drizzle-orm';
import * as v from 'valibot';
import { chunkedInsert } from '../../db/chunk';
import type { Db, Statement } from '../../db/client';
import { d1Statement, runBatch, runD1Batch } from '../../db/client';
import { auditEvent, auditEvents, auditEventWhere, type Actor } from '../../db/events';
import { applyJsonPatch, type JsonPatch } from '../../http/json-patch';
import {
  dependentFeatures,
  favoriteFeatures,
  featureEnvironments,
  featureLifecycles,
  featureStrategies,
  featureStrategySegment,
  features,
  type StrategyVariantDoc,
  type VariantDoc,
} from '../../db/schema';
import { ApiError, badData, badRequest, conflict, notFound, validationError } from '../../http/errors';
import { parseInput } from '../../http/validation';
import type { CreateFeatureRequest, StrategyRequest, UpdateFeatureRequest } from './schema';
import {
  StrategySchema,
  VariantsSchema,
  CreateFeatureSchema,
  DependencySchema,
  PatchFeatureSchema,
  FLAG_TYPE,
  UpdateFeatureSchema,
  ValidateFeatureNameSchema,
} from './schema';
import { safePattern } from '../import-export/rules';
import {
  CREATE_FEATURE_STRATEGY,
  requireAnyPermission,
  UPDATE_FEATURE_ENVIRONMENT_VARIANTS,
  type PermissionHolder,
} from '../../auth/permissions';
import { projects } from '../../db/schema';
import * as store from './store';
import { fixWeights, WEIGHT_PROBLEMS } from './weights';
import { gravatarUrl } from '../../identity/users/gravatar';
import type { FeatureRow, StrategyRow } from './store';
import { linksOf } from '../feature-links/service';

export const FLAG_EXISTS = 'A flag with that name already exists';

function nowIso(): string {
  return new Date().toISOString();
}

function invalidOperation(message: string): ApiError {
  return new ApiError(403, 'InvalidOperationError', message);
}

function isUniqueViolation(error: unknown): boolean {
  return error instanceof Error && /UNIQUE constraint failed|SQLITE_CONSTRAINT/.test(`${error.message} ${String(error.cause ?? '')}`);
}

// ---------------------------------------------------------------------------------------
// Shapes

/** A flag as 6.10.1 answers its creation and records it in `feature-created`, in its key order. */
function flagFields(
  row: Pick<
    FeatureRow,
    'name' | 'description' | 'type' | 'project' | 'stale' | 'createdAt' | 'lastSeenAt' | 'impressionData' | 'archivedAt'
  >,
) {
  return {
    name: row.name,
    description: row.description,
    type: row.type,
    project: row.project,
    stale: row.stale,
    createdAt: row.createdAt,
    lastSeenAt: row.lastSeenAt,
    impressionData: row.impressionData,
    archived: row.archivedAt !== null,
  };
}

export function featureSummary(row: FeatureRow) {
  return { ...flagFields(row), archivedAt: row.archivedAt };
}

export interface CreatorRow {
  id: number;
  name: string | null;
  username: string | null;
  email: string | null;
}

/** Unleash's `createdBy`: id, display name and a gravatar URL built from email or name. */
export async function creatorOf(userId: number | null, user: CreatorRow | undefined) {
  const name = user?.name || user?.username || user?.email || 'unknown';
  return { id: user?.id ?? userId ?? 0, name, imageUrl: await gravatarUrl((user?.email || name).toLowerCase()) };
}

export function strategyShape(row: StrategyRow, segmentIds: number[]) {
  return {
    id: row.id,
    name: row.strategyName,
    title: row.title,
    disabled: row.disabled,
    featureName: row.featureName,
    sortOrder: row.sortOrder,
    segments: segmentIds,
    constraints: row.constraints,
    variants: row.variants,
    parameters: row.parameters,
  };
}

/**
 * A strategy as 6.10.1 records it in `feature-strategy-*` events' `data`/`preData`: its own
 * key order, without `featureName` (the event names the flag).
 */
export function strategyEventData(
  row: Pick<StrategyRow, 'id' | 'strategyName' | 'title' | 'constraints' | 'parameters' | 'variants' | 'sortOrder'> & {
    disabled?: boolean | null;
  },
  segmentIds: number[],
) {
  return {
    id: row.id,
    name: row.strategyName,
    title: row.title,
    disabled: row.disabled ?? false,
    constraints: row.constraints ?? [],
    parameters: row.parameters,
    variants: row.variants ?? [],
    sortOrder: row.sortOrder,
    segments: segmentIds,
  };
}

// ---------------------------------------------------------------------------------------
// Lookups that answer Unleash's 404s

export async function requireProject(db: Db, projectId: string) {
  const project = await store.findActiveProject(db, projectId);
  if (!project) throw notFound(`Active project with id ${projectId} does not exist`);
  return project;
}

function noSuchFeature(projectId: string, name: string): ApiError {
  return notFound(`There's no feature named "${name}" in project "${projectId}".`);
}

/** The feature, which must be in `projectId` (archived ones only when `allowArchived`). */
export async function requireFeature(db: Db, projectId: string, name: string, allowArchived = false): Promise<FeatureRow> {
  const feature = await store.findFeature(db, name);
  if (!feature || feature.project !== projectId || (!allowArchived && feature.archivedAt !== null)) throw noSuchFeature(projectId, name);
  return feature;
}

/**
 * The flag and its row in `environment`. 6.10.1 words the 404 of a missing environment
 * differently per operation: `missing` gives the read operations' own message.
 */
async function requireFeatureEnvironment(
  db: Db,
  projectId: string,
  name: string,
  environment: string,
  missing = `Could not find environment ${environment} for feature: ${name}`,
) {
  const feature = await requireFeature(db, projectId, name);
  const featureEnvironment = await store.featureEnvironmentRow(db, name, environment);
  if (!featureEnvironment) throw notFound(missing);
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
  const statements: Statement[] = [db.insert(features).values(row)];
  const featureEnvironmentRows = environmentNames.map((environment) => ({ featureName: feature.name, environment, enabled: false }));
  statements.push(...chunkedInsert(featureEnvironmentRows, 3, (run) => db.insert(featureEnvironments).values(run)));
  statements.push(db.insert(featureLifecycles).values({ feature: feature.name, stage: 'initial', createdAt }).onConflictDoNothing());
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

export async function createFeature(db: Db, actor: Actor, projectId: string, input: unknown) {
  const body: CreateFeatureRequest = parseInput(CreateFeatureSchema, input, '/body');
  await requireProject(db, projectId);
  if (await store.findFeature(db, body.name)) throw conflict(FLAG_EXISTS);
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
    if (isUniqueViolation(error)) throw conflict(FLAG_EXISTS);
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
export async function validateNewName(db: Db, input: unknown): Promise<void> {
  const body = parseInput(ValidateFeatureNameSchema, input, '/body');
  const existing = await store.findFeature(db, body.name);
  if (existing) throw conflict(existing.archivedAt !== null ? 'An archived flag with that name already exists' : FLAG_EXISTS);
  if (!body.projectId) return;
  const [project] = await db
    .select({
      pattern: projects.featureNamingPattern,
      example: projects.featureNamingExample,
      description: projects.featureNamingDescription,
    })
    .from(projects)
    .where(eq(projects.id, body.projectId))
    .limit(1);
  if (!project?.pattern || safePattern(project.pattern)?.test(body.name) !== false) return;
  const example = project.example ? ` Here's an example of a name that does match the pattern: "${project.example}"."` : '';
  const description = project.description ? ` The pattern's description is: "${project.description}"` : '';
  const message = `The feature flag name "${body.name}" does not match the project's naming pattern: "${project.pattern}".${example}${description}`;
  throw new ApiError(400, 'PatternError', message, [{ message: 'The flag name does not match the pattern.' }]);
}

/** The variant names a child flag may depend on: the parent's strategy and environment variants. */
export async function possibleParentVariants(db: Db, parent: string): Promise<string[]> {
  const rows = await db.all<{ name: string }>(sql`
    SELECT DISTINCT name FROM (
      SELECT json_extract(v.value, '$.name') AS name FROM feature_strategies fs, json_each(fs.variants) v WHERE fs.feature_name = ${parent}
      UNION ALL
      SELECT json_extract(v.value, '$.name') AS name FROM feature_environments fe, json_each(fe.variants) v WHERE fe.feature_name = ${parent}
    ) WHERE name IS NOT NULL ORDER BY name`);
  return rows.map((row) => row.name);
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
  const set: Partial<typeof features.$inferInsert> = {};
  if (changes.description !== undefined) set.description = changes.description;
  if (changes.type !== undefined) set.type = changes.type;
  if (changes.impressionData !== undefined) set.impressionData = changes.impressionData;
  if (changes.stale !== undefined) set.stale = changes.stale;
  const statements: Statement[] = [];
  if (Object.keys(set).length > 0) statements.push(db.update(features).set(set).where(eq(features.name, feature.name)));
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

export async function updateFeature(db: Db, actor: Actor, projectId: string, name: string, input: unknown) {
  const body = parseInput(UpdateFeatureSchema, input, '/body');
  const feature = await requireFeature(db, projectId, name);
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

export async function patchFeature(db: Db, actor: Actor, projectId: string, name: string, input: unknown) {
  const operations = parseInput(PatchFeatureSchema, input, '/body');
  const changes: MetadataChanges = {};
  operations.forEach((operation, index) => {
    const parsed = v.safeParse(PatchValues[operation.path], operation.value);
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
  await requireProject(db, projectId);
  const unique = [...new Set(names)];
  const rows = await store.featuresByName(db, unique);
  const found = new Set(rows.filter((row) => row.project === projectId && row.archivedAt === null).map((row) => row.name));
  const missing = unique.filter((name) => !found.has(name));
  if (missing.length > 0) throw noSuchFeature(projectId, missing[0]!);
  const statements: Statement[] = [
    db
      .update(features)
      .set({ stale })
      .where(sql`${features.name} IN (SELECT value FROM json_each(${JSON.stringify(unique)}))`),
  ];
  for (const name of unique) {
    statements.push(
      auditEvent(db, actor, { type: stale ? 'feature-stale-on' : 'feature-stale-off', project: projectId, featureName: name }),
    );
  }
  await runBatch(db, statements);
}

// ---------------------------------------------------------------------------------------
// Archive and revive

async function requireNoActiveChildren(db: Db, name: string): Promise<void> {
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
  const { name } = feature;
  const archivedAt = nowIso();
  const archivedNow = sql`EXISTS (SELECT 1 FROM ${features} WHERE ${features.name} = ${name} AND ${features.archivedAt} = ${archivedAt})`;
  const [archived] = await runD1Batch(db, [
    d1Statement(
      db,
      db
        .update(features)
        .set({ archivedAt })
        .where(
          and(
            eq(features.name, name),
            isNull(features.archivedAt),
            sql`NOT EXISTS (SELECT 1 FROM ${dependentFeatures} JOIN ${features} AS child ON child.name = ${dependentFeatures.child}
              WHERE ${dependentFeatures.parent} = ${name} AND child.archived_at IS NULL)`,
          ),
        ),
    ),
    // An archived feature no longer depends on anything (Unleash drops its parents).
    d1Statement(db, db.delete(dependentFeatures).where(and(eq(dependentFeatures.child, name), archivedNow))),
    d1Statement(
      db,
      sql`INSERT INTO ${featureLifecycles} (feature, stage, created_at) SELECT ${name}, 'archived', ${archivedAt} WHERE ${archivedNow}
        ON CONFLICT (feature, stage) DO UPDATE SET created_at = excluded.created_at, status = NULL, status_value = NULL`,
    ),
    d1Statement(db, auditEventWhere(actor, { type: 'feature-archived', project: feature.project, featureName: name }, archivedNow)),
  ]);
  return archived!.meta.changes > 0;
}

export async function archiveFeature(db: Db, actor: Actor, projectId: string, name: string) {
  const feature = await requireFeature(db, projectId, name);
  await requireNoActiveChildren(db, name);
  if (!(await archiveIfUnused(db, actor, feature))) {
    // Something changed since the checks: they now say what.
    await requireFeature(db, projectId, name);
    await requireNoActiveChildren(db, name);
    throw conflict(`Feature ${name} changed while it was being archived; try again.`);
  }
}

export async function reviveFeatures(db: Db, actor: Actor, names: readonly string[], projectId?: string) {
  const unique = [...new Set(names)];
  const rows = await store.featuresByName(db, unique);
  const archived = new Map(
    rows.filter((row) => row.archivedAt !== null && (projectId === undefined || row.project === projectId)).map((row) => [row.name, row]),
  );
  const missing = unique.filter((name) => !archived.has(name));
  if (missing.length > 0) throw notFound(`Could not find archived feature flag ${missing[0]}`);
  const list = JSON.stringify(unique);
  const statements: Statement[] = [
    db
      .update(features)
      .set({ archivedAt: null })
      .where(sql`${features.name} IN (SELECT value FROM json_each(${list}))`),
    db
      .delete(featureLifecycles)
      .where(and(eq(featureLifecycles.stage, 'archived'), sql`${featureLifecycles.feature} IN (SELECT value FROM json_each(${list}))`)),
  ];
  for (const row of archived.values()) {
    statements.push(auditEvent(db, actor, { type: 'feature-revived', project: row.project, featureName: row.name }));
  }
  await runBatch(db, statements);
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
  if (!feature || feature.archivedAt === null) throw notFound(`Could not find archived feature flag ${name}`);
  const children = await store.activeChildren(db, name);
  if (children.length > 0) throw invalidOperation('You can not archive/delete this feature since other features depend on it.');
  await runBatch(db, [
    db.delete(dependentFeatures).where(eq(dependentFeatures.parent, name)),
    db.delete(features).where(eq(features.name, name)),
    auditEvent(db, actor, { type: 'feature-deleted', project: feature.project, featureName: name, preData: featureSummary(feature) }),
  ]);
}

// ---------------------------------------------------------------------------------------
// Environments on/off

export async function setEnvironmentEnabled(
  db: Db,
  actor: Actor & PermissionHolder,
  projectId: string,
  name: string,
  environment: string,
  enabled: boolean,
) {
  await runBatch(db, await environmentToggleStatements(db, actor, projectId, name, environment, enabled));
}

/**
 * The statements that turn one flag on or off in one environment, after Unleash's checks (the
 * flag in the project, the environment on the flag, and, when turning on a flag with no
 * strategies, the right to add its default strategy): for one call's batch or a bulk one.
 */
export async function environmentToggleStatements(
  db: Db,
  actor: Actor & PermissionHolder,
  projectId: string,
  name: string,
  environment: string,
  enabled: boolean,
): Promise<Statement[]> {
  const { feature, featureEnvironment } = await requireFeatureEnvironment(db, projectId, name, environment);
  const statements: Statement[] = [];
  if (enabled && (await store.strategyCount(db, name, environment)) === 0) {
    // Unleash turns a flag with no strategies on for everyone by adding its default strategy,
    // so the caller must also be allowed to add one there (its stopWhenCannotCreateStrategies).
    requireAnyPermission(actor, [CREATE_FEATURE_STRATEGY], projectId, environment);
    const projectEnvironment = await store.projectEnvironment(db, projectId, environment);
    const configured = projectEnvironment?.defaultStrategy as
      | {
          name?: string;
          title?: string | null;
          parameters?: Record<string, string>;
          constraints?: [];
          variants?: StrategyVariantDoc[];
          segments?: number[];
        }
      | null
      | undefined;
    const strategyName = configured?.name ?? 'flexibleRollout';
    const parameters = { ...(configured?.parameters ?? { rollout: '100', stickiness: 'default', groupId: name }) };
    // As Unleash: a flexible rollout without a group id groups by the flag.
    if (strategyName === 'flexibleRollout' && !parameters.groupId) parameters.groupId = name;
    // The project's default strategy with everything it names: its title, variants and the
    // segments that still exist.
    const segmentIds = [...new Set(configured?.segments ?? [])];
    const existing = segmentIds.length === 0 ? new Set<number>() : await store.existingSegmentIds(db, segmentIds);
    const strategy = {
      id: crypto.randomUUID(),
      featureName: name,
      projectName: projectId,
      environment,
      strategyName,
      title: configured?.title ?? null,
      parameters,
      constraints: configured?.constraints ?? [],
      variants: configured?.variants ?? [],
      sortOrder: 0,
      createdByUserId: actor.userId,
    };
    statements.push(db.insert(featureStrategies).values(strategy));
    for (const segmentId of segmentIds.filter((id) => existing.has(id))) {
      statements.push(db.insert(featureStrategySegment).values({ featureStrategyId: strategy.id, segmentId }));
    }
    statements.push(
      auditEvent(db, actor, {
        type: 'feature-strategy-add',
        project: projectId,
        environment,
        featureName: name,
        data: strategyEventData(
          strategy,
          segmentIds.filter((id) => existing.has(id)),
        ),
      }),
    );
  }
  // As in Unleash, a flag already in that state changes nothing and records no event, so
  // SDKs' revision does not move for it.
  if (featureEnvironment.enabled === enabled) return statements;
  statements.push(
    db
      .update(featureEnvironments)
      .set({ enabled })
      .where(and(eq(featureEnvironments.featureName, name), eq(featureEnvironments.environment, environment))),
  );
  statements.push(
    auditEvent(db, actor, {
      type: enabled ? 'feature-environment-enabled' : 'feature-environment-disabled',
      project: feature.project,
      environment,
      featureName: name,
      // 6.10.1 records neither `data` nor `preData`: the type says what changed.
    }),
  );
  return statements;
}

// ---------------------------------------------------------------------------------------
// Strategies

/**
 * The variants with their weights fixed (features/weights.ts) and sorted by name, as Unleash
 * stores and answers them; or its 400 BadDataError saying why not.
 */
export function balanceWeights<T extends { name: string; weight: number; weightType?: 'variable' | 'fix' }>(variants: T[]): T[] {
  const balanced = fixWeights(variants);
  if (typeof balanced === 'string') throw badData(WEIGHT_PROBLEMS[balanced]);
  return balanced.sort((a, b) => VARIANT_ORDER.compare(a.name, b.name));
}

/** Unleash sorts with `localeCompare` in its (English) locale: `_x`, `10`, `9`, `alpha`, `Zeta`. */
const VARIANT_ORDER = new Intl.Collator('en');

async function validateStrategyReferences(db: Db, body: StrategyRequest) {
  if (!(await store.strategyExists(db, body.name))) throw badRequest(`${body.name} is not supported.`);
  const wanted = [...new Set(body.segments)];
  const found = await store.existingSegmentIds(db, wanted);
  const missing = wanted.filter((id) => !found.has(id));
  if (missing.length > 0) throw badRequest(`Unsupported segments: ${missing.join(', ')}`);
}

function isForeignKeyViolation(error: unknown): boolean {
  return error instanceof Error && /FOREIGN KEY constraint failed/.test(`${error.message} ${String(error.cause ?? '')}`);
}

/**
 * Writes a strategy and its segment links. The links' foreign keys re-check, inside the
 * batch, that the segments checked before still exist: a segment deleted meanwhile fails the
 * whole batch, reported as the 400 the check would have given (a strategy must never be
 * stored without a segment it was given, which would widen its rollout).
 */
async function writeStrategy(db: Db, body: StrategyRequest, statements: Statement[]): Promise<void> {
  try {
    await runBatch(db, statements);
  } catch (error) {
    if (isForeignKeyViolation(error)) await validateStrategyReferences(db, body);
    throw error;
  }
}

export function segmentLinks(db: Db, strategyId: string, segmentIds: readonly number[]): Statement[] {
  const links = [...new Set(segmentIds)].map((segmentId) => ({ featureStrategyId: strategyId, segmentId }));
  return chunkedInsert(links, 2, (run) => db.insert(featureStrategySegment).values(run));
}

export async function listStrategies(db: Db, projectId: string, name: string, environment: string) {
  await requireFeatureEnvironment(db, projectId, name, environment, `Feature ${name} does not have environment ${environment}`);
  const { rows, links } = await store.strategiesWithSegments(db, name, environment);
  return rows.map((row) =>
    strategyShape(
      row,
      links.filter((link) => link.strategyId === row.id).map((link) => link.segmentId),
    ),
  );
}

export async function getStrategy(db: Db, projectId: string, name: string, environment: string, strategyId: string) {
  await requireFeatureEnvironment(db, projectId, name, environment);
  const found = await store.strategyWithSegments(db, name, environment, strategyId);
  // 6.10.1's read says "id: <id>"; its update and delete say "id <id>".
  if (!found) throw notFound(`Could not find strategy with id: ${strategyId}`);
  return strategyShape(found.row, found.segmentIds);
}

export async function addStrategy(db: Db, actor: Actor, projectId: string, name: string, environment: string, body: StrategyRequest) {
  const { feature } = await requireFeatureEnvironment(db, projectId, name, environment);
  await validateStrategyReferences(db, body);
  const strategyVariants = balanceWeights(body.variants) as StrategyVariantDoc[];
  const id = crypto.randomUUID();
  const row = {
    id,
    featureName: name,
    projectName: feature.project,
    environment,
    strategyName: body.name,
    title: body.title ?? null,
    parameters: body.parameters,
    constraints: body.constraints,
    variants: strategyVariants,
    sortOrder: body.sortOrder ?? (await store.nextStrategySortOrder(db, name, environment)),
    disabled: body.disabled ?? false,
    createdByUserId: actor.userId,
  };
  const shape = strategyShape({ ...row, createdAt: nowIso() }, [...new Set(body.segments)]);
  await writeStrategy(db, body, [
    db.insert(featureStrategies).values(row),
    ...segmentLinks(db, id, body.segments),
    auditEvent(db, actor, {
      type: 'feature-strategy-add',
      project: feature.project,
      environment,
      featureName: name,
      data: strategyEventData(row, [...new Set(body.segments)]),
    }),
  ]);
  return shape;
}

export async function updateStrategy(
  db: Db,
  actor: Actor,
  projectId: string,
  name: string,
  environment: string,
  strategyId: string,
  body: StrategyRequest,
) {
  const { feature } = await requireFeatureEnvironment(db, projectId, name, environment);
  const existing = await store.strategyWithSegments(db, name, environment, strategyId);
  if (!existing) throw notFound(`Could not find strategy with id ${strategyId}`);
  await validateStrategyReferences(db, body);
  const changes = {
    strategyName: body.name,
    title: body.title ?? null,
    parameters: body.parameters,
    constraints: body.constraints,
    variants: balanceWeights(body.variants) as StrategyVariantDoc[],
    sortOrder: body.sortOrder ?? existing.row.sortOrder,
    disabled: body.disabled ?? false,
  };
  const shape = strategyShape({ ...existing.row, ...changes }, [...new Set(body.segments)]);
  await writeStrategy(db, body, [
    db.update(featureStrategies).set(changes).where(eq(featureStrategies.id, strategyId)),
    db.delete(featureStrategySegment).where(eq(featureStrategySegment.featureStrategyId, strategyId)),
    ...segmentLinks(db, strategyId, body.segments),
    auditEvent(db, actor, {
      type: 'feature-strategy-update',
      project: feature.project,
      environment,
      featureName: name,
      data: strategyEventData({ ...existing.row, ...changes }, [...new Set(body.segments)]),
      preData: strategyEventData(existing.row, existing.segmentIds),
    }),
  ]);
  return shape;
}

export async function deleteStrategy(db: Db, actor: Actor, projectId: string, name: string, environment: string, strategyId: string) {
  const { feature } = await requireFeatureEnvironment(db, projectId, name, environment);
  const existing = await store.strategyWithSegments(db, name, environment, strategyId);
  if (!existing) throw notFound(`Could not find strategy with id ${strategyId}`);
  await runBatch(db, [
    db.delete(featureStrategies).where(eq(featureStrategies.id, strategyId)),
    auditEvent(db, actor, {
      type: 'feature-strategy-remove',
      project: feature.project,
      environment,
      featureName: name,
      // 6.10.1 records the removed strategy without its segments.
      preData: strategyEventData(existing.row, []),
    }),
  ]);
}

/** One environment of a flag as Unleash shows it: `name` is the flag's, strategies without their segments. */
export async function getFeatureEnvironment(db: Db, projectId: string, name: string, environment: string) {
  await requireFeature(db, projectId, name);
  const featureEnvironment = await store.featureEnvironmentRow(db, name, environment);
  if (!featureEnvironment) throw notFound(`Could not find ${name} in ${environment}`);
  const { rows } = await store.strategiesWithSegments(db, name, environment);
  return {
    name,
    environment,
    enabled: featureEnvironment.enabled,
    strategies: rows.map((row) => ({
      id: row.id,
      featureName: row.featureName,
      title: row.title,
      parameters: row.parameters,
      constraints: row.constraints,
      variants: row.variants,
      sortOrder: row.sortOrder,
      disabled: row.disabled,
      name: row.strategyName,
    })),
  };
}

/** Applies a JSON Patch to the strategy as GET shows it; the result must be a valid strategy. */
export async function patchStrategy(
  db: Db,
  actor: Actor,
  projectId: string,
  name: string,
  environment: string,
  strategyId: string,
  patch: JsonPatch,
) {
  const current = await getStrategy(db, projectId, name, environment, strategyId);
  const patched = parseInput(StrategySchema, applyJsonPatch(current, patch), '/body');
  return updateStrategy(db, actor, projectId, name, environment, strategyId, patched);
}

/** Sets the sort order of some of a flag's strategies in one environment (the UI's drag and drop). */
export async function setStrategySortOrder(
  db: Db,
  actor: Actor,
  projectId: string,
  name: string,
  environment: string,
  orders: { id: string; sortOrder: number }[],
) {
  const { feature } = await requireFeatureEnvironment(db, projectId, name, environment);
  const { rows } = await store.strategiesWithSegments(db, name, environment);
  const known = new Set(rows.map((row) => row.id));
  const unknown = orders.find((order) => !known.has(order.id));
  if (unknown) throw badRequest(`Strategy ${unknown.id} is not one of the strategies of ${name} in ${environment}`);
  const wanted = new Map(orders.map((order) => [order.id, order.sortOrder]));
  const before = rows.map((row) => row.id);
  const after = rows
    .map((row, index) => ({ id: row.id, sortOrder: wanted.get(row.id) ?? row.sortOrder, index }))
    .sort((a, b) => a.sortOrder - b.sortOrder || a.index - b.index)
    .map((row) => row.id);
  await runBatch(db, [
    ...orders.map((order) => store.setStrategySortOrder(db, name, environment, order.id, order.sortOrder)),
    auditEvent(db, actor, {
      type: 'strategy-order-changed',
      project: feature.project,
      environment,
      featureName: name,
      data: { strategyIds: after },
      preData: { strategyIds: before },
    }),
  ]);
}

// ---------------------------------------------------------------------------------------
// Environment variants

export async function getEnvironmentVariants(db: Db, projectId: string, name: string, environment: string) {
  const { featureEnvironment } = await requireFeatureEnvironment(
    db,
    projectId,
    name,
    environment,
    `Could not find ${name} in ${environment}`,
  );
  return { version: 1, variants: featureEnvironment.variants };
}

/** Unique names and Unleash's weight rule: the variants as stored, or a 400. */
function checkedVariants(variants: VariantDoc[]): VariantDoc[] {
  const names = new Set<string>();
  for (const variant of variants) {
    if (names.has(variant.name)) throw badRequest(`Variant names must be unique: "${variant.name}" appears twice`);
    names.add(variant.name);
  }
  return balanceWeights(variants);
}

/**
 * Unleash 6 refuses new environment variants (its default settings): a flag may only change
 * them if one of its environments already has some; otherwise strategy variants are the way.
 */
async function requireLegacyVariants(db: Db, name: string) {
  const rows = await store.featureEnvironmentVariants(db, name);
  if (!rows.some((row) => row.variants.length > 0)) {
    throw new ApiError(
      403,
      'InvalidOperationError',
      `Environment variants deprecated for feature: ${name}. Use strategy variants instead.`,
    );
  }
  return rows;
}

function environmentVariantsEvent(feature: FeatureRow, environment: string, before: VariantDoc[], after: VariantDoc[]) {
  return {
    type: 'feature-environment-variants-updated',
    project: feature.project,
    environment,
    featureName: feature.name,
    data: { variants: after },
    preData: { variants: before },
  };
}

export async function setEnvironmentVariants(
  db: Db,
  actor: Actor,
  projectId: string,
  name: string,
  environment: string,
  variants: VariantDoc[],
) {
  const { feature, featureEnvironment } = await requireFeatureEnvironment(db, projectId, name, environment);
  await requireLegacyVariants(db, name);
  const balanced = checkedVariants(variants);
  await runBatch(db, [
    store.setEnvironmentVariants(db, name, balanced, [environment]),
    auditEvent(db, actor, environmentVariantsEvent(feature, environment, featureEnvironment.variants, balanced)),
  ]);
  return { version: 1, variants: balanced };
}

/** The patched document, validated as a variant list (400 when the patch leaves something else). */
function patchedVariants(variants: VariantDoc[], patch: JsonPatch): VariantDoc[] {
  return checkedVariants(parseInput(VariantsSchema, applyJsonPatch(variants, patch), '/body') as VariantDoc[]);
}

export async function patchEnvironmentVariants(
  db: Db,
  actor: Actor,
  projectId: string,
  name: string,
  environment: string,
  patch: JsonPatch,
) {
  const { feature, featureEnvironment } = await requireFeatureEnvironment(db, projectId, name, environment);
  await requireLegacyVariants(db, name);
  const balanced = patchedVariants(featureEnvironment.variants, patch);
  await runBatch(db, [
    store.setEnvironmentVariants(db, name, balanced, [environment]),
    auditEvent(db, actor, environmentVariantsEvent(feature, environment, featureEnvironment.variants, balanced)),
  ]);
  return { version: 1, variants: balanced };
}

/** Feature-level variants are those of the flag's first environment (Unleash 4.18 moved them there). */
export async function getFeatureVariants(db: Db, projectId: string, name: string) {
  const feature = await store.findFeature(db, name);
  // 6.10.1's message for this read.
  if (!feature || feature.project !== projectId || feature.archivedAt !== null) throw notFound('No feature flag found');
  const rows = await store.featureEnvironmentVariants(db, name);
  return { version: 1, variants: rows[0]?.variants ?? [] };
}

/** Sets the same variants in every environment of the flag (allowed even where environment variants are refused, as in Unleash). */
export async function setFeatureVariants(db: Db, actor: Actor, projectId: string, name: string, variants: VariantDoc[]) {
  const feature = await requireFeature(db, projectId, name);
  const rows = await store.featureEnvironmentVariants(db, name);
  const balanced = checkedVariants(variants);
  await runBatch(db, [
    store.setEnvironmentVariants(db, name, balanced),
    auditEvent(db, actor, {
      type: 'feature-variants-updated',
      project: feature.project,
      featureName: name,
      data: { variants: balanced },
      preData: { variants: rows[0]?.variants ?? [] },
    }),
  ]);
  return { version: 1, variants: balanced };
}

/** Applies the patch to each environment's variants; answers the first environment's. */
export async function patchFeatureVariants(db: Db, actor: Actor, projectId: string, name: string, patch: JsonPatch) {
  const feature = await requireFeature(db, projectId, name);
  const rows = await requireLegacyVariants(db, name);
  const results = rows.map((row) => ({ ...row, after: patchedVariants(row.variants, patch) }));
  await runBatch(db, [
    ...results.map((row) => store.setEnvironmentVariants(db, name, row.after, [row.environment])),
    ...auditEvents(
      db,
      actor,
      results.map((row) => environmentVariantsEvent(feature, row.environment, row.variants, row.after)),
    ),
  ]);
  return { version: 1, variants: results[0]?.after ?? [] };
}

/**
 * Sets variants in several environments at once (the UI's "copy to environments"); the caller
 * needs the environment-variants permission in each. Unleash fills in `variable` and `default`.
 */
export async function setVariantsOnEnvironments(
  db: Db,
  actor: Actor,
  principal: PermissionHolder,
  projectId: string,
  name: string,
  body: { variants: VariantDoc[]; environments: string[] },
) {
  if (body.environments.length === 0) throw badRequest('No environments provided');
  for (const environment of body.environments) {
    requireAnyPermission(principal, [UPDATE_FEATURE_ENVIRONMENT_VARIANTS], projectId, environment);
  }
  const feature = await requireFeature(db, projectId, name);
  const rows = await store.featureEnvironmentVariants(db, name);
  const wanted = [...new Set(body.environments)];
  const missing = wanted.filter((environment) => !rows.some((row) => row.environment === environment));
  if (missing.length > 0) throw notFound(`Could not find environment ${missing[0]} for feature: ${name}`);
  const balanced = checkedVariants(body.variants);
  await runBatch(db, [
    store.setEnvironmentVariants(db, name, balanced, wanted),
    ...auditEvents(
      db,
      actor,
      rows
        .filter((row) => wanted.includes(row.environment))
        .map((row) => environmentVariantsEvent(feature, row.environment, row.variants, balanced)),
    ),
  ]);
  return { version: 1, variants: balanced };
}

// ---------------------------------------------------------------------------------------
// Favourites (per calling principal's user id)

export async function setFavorite(db: Db, actor: Actor, projectId: string, name: string, favorite: boolean) {
  const feature = await requireFeature(db, projectId, name, true);
  await runBatch(db, [
    favorite
      ? db.insert(favoriteFeatures).values({ feature: name, userId: actor.userId }).onConflictDoNothing()
      : db.delete(favoriteFeatures).where(and(eq(favoriteFeatures.feature, name), eq(favoriteFeatures.userId, actor.userId))),
    auditEvent(db, actor, { type: favorite ? 'feature-favorited' : 'feature-unfavorited', project: feature.project, featureName: name }),
  ]);
}

// ---------------------------------------------------------------------------------------
// Dependencies: one level only, as Unleash allows, which also rules out every cycle.

export interface NewDependency {
  parent: string;
  child: Pick<FeatureRow, 'name' | 'project'>;
  enabled: boolean;
  variants: string[];
  /** The variants as the request named them, for the event (Unleash records them only then). */
  namedVariants?: string[];
}

/**
 * The dependency write: gives the child its one parent only if both are still active and
 * neither link would be transitive — re-checked in SQL by every statement of the batch, so
 * that a parent archived (or a child made a parent) after the handler's checks leaves
 * nothing written, the child's old parent included. Returns whether it wrote.
 */
export async function linkIfAllowed(db: Db, actor: Actor, dependency: NewDependency): Promise<boolean> {
  const { parent, enabled, variants } = dependency;
  const child = dependency.child.name;
  const stillAllowed = sql`(SELECT count(*) FROM ${features} WHERE ${features.name} IN (${parent}, ${child}) AND ${features.archivedAt} IS NULL) = 2
    AND NOT EXISTS (SELECT 1 FROM ${dependentFeatures} WHERE ${dependentFeatures.parent} = ${child} OR ${dependentFeatures.child} = ${parent})`;
  const [, added] = await runD1Batch(db, [
    // One parent per child, as in Unleash: a new parent replaces the old one.
    d1Statement(db, db.delete(dependentFeatures).where(and(eq(dependentFeatures.child, child), stillAllowed))),
    d1Statement(
      db,
      sql`INSERT INTO ${dependentFeatures} (parent, child, enabled, variants)
        SELECT ${parent}, ${child}, ${enabled ? 1 : 0}, ${JSON.stringify(variants)} WHERE ${stillAllowed}`,
    ),
    d1Statement(
      db,
      // changes(): the rows the insert just above wrote, in this same batch.
      auditEventWhere(
        actor,
        {
          type: 'feature-dependency-added',
          project: dependency.child.project,
          featureName: child,
          data: {
            feature: parent,
            enabled,
            ...(dependency.namedVariants !== undefined ? { variants: dependency.namedVariants } : {}),
          },
        },
        sql`changes() = 1`,
      ),
    ),
  ]);
  return added!.meta.changes > 0;
}

export async function addDependency(db: Db, actor: Actor, projectId: string, child: string, input: unknown) {
  const body = parseInput(DependencySchema, input, '/body');
  const check = async () => {
    const childFeature = await requireFeature(db, projectId, child);
    if (body.feature === child) throw invalidOperation('A feature flag cannot depend on itself.');
    const parent = await store.findFeature(db, body.feature);
    if (!parent || parent.archivedAt !== null) throw notFound(`There's no feature named "${body.feature}" in project "${projectId}".`);
    if (parent.project !== childFeature.project)
      throw invalidOperation('Dependencies are only allowed between features in the same project.');
    const [childLinks, parentLinks] = await Promise.all([store.dependencyLinks(db, child), store.dependencyLinks(db, body.feature)]);
    if (childLinks.asParent.length > 0 || parentLinks.asChild.length > 0) {
      throw invalidOperation('Transitive dependency detected. Cannot add a dependency to the feature that other features depend on.');
    }
    return childFeature;
  };
  const childFeature = await check();
  const variants = body.enabled ? body.variants : [];
  const namedVariants = typeof input === 'object' && input !== null && 'variants' in input ? body.variants : undefined;
  if (!(await linkIfAllowed(db, actor, { parent: body.feature, child: childFeature, enabled: body.enabled, variants, namedVariants }))) {
    // Something changed since the checks: they now say what.
    await check();
    throw conflict(`The dependency of ${child} on ${body.feature} changed while it was being written; try again.`);
  }
}

export async function removeDependency(db: Db, actor: Actor, projectId: string, child: string, parent?: string) {
  const feature = await requireFeature(db, projectId, child);
  await runBatch(db, [
    parent === undefined
      ? db.delete(dependentFeatures).where(eq(dependentFeatures.child, child))
      : db.delete(dependentFeatures).where(and(eq(dependentFeatures.child, child), eq(dependentFeatures.parent, parent))),
    auditEvent(db, actor, {
      type: parent === undefined ? 'feature-dependencies-removed' : 'feature-dependency-removed',
      project: feature.project,
      featureName: child,
      data: parent === undefined ? null : { feature: parent },
    }),
  ]);
}

// ---------------------------------------------------------------------------------------
// Lifecycle

/** A flag's stages; an unknown flag has none (200 `[]`, as 6.10.1 answers it). */
export async function getLifecycle(db: Db, _projectId: string, name: string) {
  const rows = await db.select().from(featureLifecycles).where(eq(featureLifecycles.feature, name)).orderBy(featureLifecycles.createdAt);
  return rows.map((row) => ({ stage: row.stage, ...(row.status ? { status: row.status } : {}), enteredStageAt: row.createdAt }));
}

export async function completeFeature(
  db: Db,
  actor: Actor,
  projectId: string,
  name: string,
  status: 'kept' | 'discarded',
  statusValue: string | null,
) {
  const feature = await requireFeature(db, projectId, name);
  const enteredAt = nowIso();
  await runBatch(db, [
    db
      .insert(featureLifecycles)
      .values({ feature: name, stage: 'completed', status, statusValue, createdAt: enteredAt })
      .onConflictDoUpdate({
        target: [featureLifecycles.feature, featureLifecycles.stage],
        set: { status, statusValue, createdAt: enteredAt },
      }),
    auditEvent(db, actor, { type: 'feature-completed', project: feature.project, featureName: name, data: { status, statusValue } }),
  ]);
}

/** A disabled `feature_environments` row for every feature of the project (when attaching an environment). */
export function attachEnvironmentToFeatures(db: Db, projectId: string, environment: string): Statement {
  return db
    .insert(featureEnvironments)
    .select(
      db
        .select({
          featureName: features.name,
          environment: sql<string>`${environment}`.as('environment'),
          enabled: sql<boolean>`0`.as('enabled'),
          variants: sql<VariantDoc[]>`'[]'`.as('variants'),
          lastSeenAt: sql<string | null>`NULL`.as('last_seen_at'),
        })
        .from(features)
        .where(eq(features.project, projectId)),
    )
    .onConflictDoNothing();
}
