/**
 * A flag's environment variants (Unleash's variants operations): read and replace them in one
 * environment, in every environment, or in several at once, directly or with a JSON Patch.
 * Unleash 6 keeps environment variants only for flags that already have some.
 */
import type { Db, Statement } from '../../db/client';
import { runBatch } from '../../db/client';
import { refuseUnlessMaySkipChangeRequests, refuseUnlessMaySkipChangeRequestsInProject } from '../../db/change-request-guard';
import { auditEvent, auditEvents, type Actor } from '../../db/events';
import type { VariantDoc } from '../../db/schema';
import { UPDATE_FEATURE_ENVIRONMENT_VARIANTS, requireAnyPermission, type PermissionHolder } from '../../auth/permissions';
import { ApiError, badRequest, notFound } from '../../http/errors';
import { applyJsonPatch, type JsonPatch } from '../../http/json-patch';
import { parseInput } from '../../http/validation';
import { findFeature, requireFeature, requireFeatureEnvironment } from '../features/service';
import type { FeatureRow } from '../features/shapes';
import { balanceWeights } from '../features/weights';
import { VariantsSchema } from './schema';
import * as store from './store';

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

/** The statement that sets a flag's variants in some environments as they are (a clone copies them so). */
export function variantsStatement(db: Db, name: string, variants: VariantDoc[], environments: readonly string[]): Statement {
  return store.setEnvironmentVariants(db, name, variants, environments);
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
  actor: Actor & PermissionHolder,
  projectId: string,
  name: string,
  environment: string,
  variants: VariantDoc[],
) {
  await refuseUnlessMaySkipChangeRequests(db, actor, projectId, environment);
  const { statements, balanced } = await environmentVariantsStatements(db, actor, projectId, name, environment, variants);
  await runBatch(db, statements);
  return { version: 1, variants: balanced };
}

/** The checks and statements of setting a flag's variants in an environment, for a direct write or an applied change request. */
export async function environmentVariantsStatements(
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
  const statements: Statement[] = [
    store.setEnvironmentVariants(db, name, balanced, [environment]),
    auditEvent(db, actor, environmentVariantsEvent(feature, environment, featureEnvironment.variants, balanced)),
  ];
  return { statements, balanced };
}

/** The patched document, validated as a variant list (400 when the patch leaves something else). */
function patchedVariants(variants: VariantDoc[], patch: JsonPatch): VariantDoc[] {
  return checkedVariants(parseInput(VariantsSchema, applyJsonPatch(variants, patch), '/body') as VariantDoc[]);
}

export async function patchEnvironmentVariants(
  db: Db,
  actor: Actor & PermissionHolder,
  projectId: string,
  name: string,
  environment: string,
  patch: JsonPatch,
) {
  await refuseUnlessMaySkipChangeRequests(db, actor, projectId, environment);
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
  const feature = await findFeature(db, name);
  // 6.10.1's message for this read.
  if (!feature || feature.project !== projectId || feature.archivedAt !== null) throw notFound('No feature flag found');
  const rows = await store.featureEnvironmentVariants(db, name);
  return { version: 1, variants: rows[0]?.variants ?? [] };
}

/** Sets the same variants in every environment of the flag (allowed even where environment variants are refused, as in Unleash). */
export async function setFeatureVariants(db: Db, actor: Actor & PermissionHolder, projectId: string, name: string, variants: VariantDoc[]) {
  const feature = await requireFeature(db, projectId, name);
  // Every environment's variants at once: governed wherever change requests are on in the project.
  await refuseUnlessMaySkipChangeRequestsInProject(db, actor, projectId);
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
export async function patchFeatureVariants(db: Db, actor: Actor & PermissionHolder, projectId: string, name: string, patch: JsonPatch) {
  const feature = await requireFeature(db, projectId, name);
  // Every environment's variants at once: governed wherever change requests are on in the project.
  await refuseUnlessMaySkipChangeRequestsInProject(db, actor, projectId);
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
    await refuseUnlessMaySkipChangeRequests(db, principal, projectId, environment);
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
