/**
 * The import pipeline before anything is written: target checks (404/400), then the
 * payload's references against D1, collecting EVERY problem (unleash-behaviour §6.4
 * messages, each with its affected items), the warnings and the permissions the import
 * needs; the result is the prepared import, ready to be cut into chunks.
 */
import {
  CREATE_CONTEXT_FIELD,
  CREATE_FEATURE,
  CREATE_FEATURE_STRATEGY,
  CREATE_TAG_TYPE,
  DELETE_FEATURE_STRATEGY,
  UPDATE_FEATURE,
  UPDATE_FEATURE_ENVIRONMENT_VARIANTS,
  hasPermission,
  type Permission,
  type PermissionHolder,
} from '../../auth/permissions';
import type { StrategyVariantDoc, VariantDoc } from '../../db/schema';
import { ApiError, badRequest, notFound } from '../../http/errors';
import { parseDateTime } from '../../http/validation';
import type {
  FeatureSlice,
  ImportTarget,
  PreparedContextField,
  PreparedDependency,
  PreparedEnvironment,
  PreparedFeature,
  PreparedImport,
  PreparedStrategy,
  PreparedTag,
  PreparedTagType,
} from './plan';
import type { ImportData, ImportRequest, ImportedConstraint, ImportedStrategy, ImportedVariant } from './schema';
import { readCatalogue, readExistingFeatures, readTarget, type TargetRows } from './store';
import { RE2JS } from 're2js';

// A type alias (not an interface) so that it fits ErrorDetail's index signature.
export type Problem = {
  message: string;
  affectedItems: string[];
};

export interface ImportAnalysis {
  target: ImportTarget;
  errors: Problem[];
  warnings: Problem[];
  /** Display names of the permissions the caller lacks, in Unleash's order. */
  missingPermissions: string[];
  prepared: PreparedImport;
  /** An import job into the same project/environment that is still queued or running. */
  activeJob: string | null;
}

/** Unleash's order of the import permissions in messages (§6.2 step B.3). */
const PERMISSION_ORDER: readonly [Permission, string][] = [
  [CREATE_CONTEXT_FIELD, 'Create context fields'],
  [CREATE_FEATURE_STRATEGY, 'Create activation strategies'],
  [DELETE_FEATURE_STRATEGY, 'Delete activation strategies'],
  [UPDATE_FEATURE_ENVIRONMENT_VARIANTS, 'Update variants'],
  [CREATE_FEATURE, 'Create feature flags'],
  [UPDATE_FEATURE, 'Update feature flags'],
  [CREATE_TAG_TYPE, 'Create tag types'],
];

export const MESSAGES = {
  unknownStrategies: 'We detected the following custom strategy that needs to be created first:',
  contextFields: 'We detected the following context fields that do not have matching legal values with the imported ones:',
  otherProjects: (project: string) =>
    `You cannot import a features that already exist in other projects. You already have the following features defined outside of project ${project}:`,
  duplicates: 'We detected the following features are duplicate in your import data:',
  missingSegments: 'We detected the following segments that need to be created first:',
  missingDependencies: 'We detected the following dependencies that need to be created first:',
  undeclaredSegmentIds: 'We detected strategies using segment ids that are not listed in data.segments:',
  unknownTagTypes: 'We detected the following tag types that are used by tags but neither declared in tagTypes nor defined:',
  unknownFeatures: (project: string) =>
    `We detected strategies, environment settings, tags or dependencies for the following features, which are neither imported nor defined in project ${project}:`,
  selfDependencies: 'A feature flag cannot depend on itself. We detected it for the following features:',
  dependencyCycles: 'We detected the following dependency cycles:',
  transitiveDependencies:
    'Transitive dependency detected: dependencies are one level deep, and the following features would be both a parent and a child:',
  invalidConstraints: 'We detected constraints whose values do not fit their operator or the legal values of their context field:',
  noVariableVariant: 'There must be at least one "variable" variant. We detected it for the variants of:',
  weightsOver: 'The traffic distribution total must equal 100%. The fixed weights exceed 1000 for the variants of:',
  customStrategies:
    'The following strategy types will be used in import. Please make sure the strategy type parameters are configured as in source environment:',
  archived: 'The following features will not be imported as they are currently archived. To import them, please unarchive them first:',
  existing: 'The following features already exist in this project and will be overwritten:',
  permissions: 'We detected you are missing the following permissions:',
} as const;

/** 404/400 for a target that cannot take an import (checked before the payload's content). */
export function assertTarget(target: ImportTarget, rows: TargetRows): void {
  if (!rows.project || rows.project.archivedAt !== null) throw notFound(`Active project with id ${target.project} does not exist`);
  if (!rows.environmentExists) throw notFound(`Could not find environment with name: ${target.environment}`);
  if (!rows.attached) throw badRequest('You have not added the current environment to the project');
}

function distinct(items: Iterable<string>): string[] {
  return [...new Set(items)];
}

/** Unleash's weight rule: fixed weights stay, variable ones share what is left of 1000. */
function fixWeights<T extends { weight: number; weightType?: 'variable' | 'fix' | undefined }>(variants: T[]): T[] | 'no-variable' | 'over' {
  if (variants.length === 0) return variants;
  const variable = variants.filter((variant) => (variant.weightType ?? 'variable') === 'variable');
  if (variable.length === 0) return 'no-variable';
  const fixed = variants.reduce((sum, variant) => ((variant.weightType ?? 'variable') === 'fix' ? sum + variant.weight : sum), 0);
  if (fixed > 1000) return 'over';
  const share = Math.floor((1000 - fixed) / variable.length);
  let remainder = (1000 - fixed) % variable.length;
  return variants.map((variant) => {
    if ((variant.weightType ?? 'variable') !== 'variable') return variant;
    const extra = remainder > 0 ? 1 : 0;
    remainder -= extra;
    return { ...variant, weightType: 'variable', weight: share + extra };
  });
}

/** Finds the cycles of a dependency graph (child -> parents), iteratively: the graph may be large. */
function findCycles(edges: Map<string, Set<string>>): string[] {
  const state = new Map<string, 1 | 2>();
  const cycles: string[] = [];
  for (const start of edges.keys()) {
    if (state.has(start)) continue;
    const stack: { node: string; parents: string[]; next: number }[] = [{ node: start, parents: [...(edges.get(start) ?? [])], next: 0 }];
    const path: string[] = [start];
    state.set(start, 1);
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      if (top.next >= top.parents.length) {
        state.set(top.node, 2);
        stack.pop();
        path.pop();
        continue;
      }
      const parent = top.parents[top.next++]!;
      const seen = state.get(parent);
      if (seen === 1) {
        if (parent !== top.node) cycles.push([...path.slice(path.indexOf(parent)), parent].join(' -> '));
        continue;
      }
      if (seen === 2) continue;
      state.set(parent, 1);
      path.push(parent);
      stack.push({ node: parent, parents: [...(edges.get(parent) ?? [])], next: 0 });
    }
  }
  return cycles;
}

function prepareTagType(tagType: ImportData['tagTypes'][number]): PreparedTagType {
  return { name: tagType.name, description: tagType.description ?? null, icon: tagType.icon ?? null, color: tagType.color ?? null };
}

export async function analyseImport(d1: D1Database, holder: PermissionHolder, body: ImportRequest): Promise<ImportAnalysis> {
  const target: ImportTarget = { project: body.project, environment: body.environment };
  const targetRows = await readTarget(d1, target);
  assertTarget(target, targetRows);
  const project = targetRows.project!;
  const data = body.data;
  const errors: Problem[] = [];
  const warnings: Problem[] = [];
  const report = (list: Problem[], message: string, items: Iterable<string>) => {
    const affectedItems = distinct(items);
    if (affectedItems.length > 0) list.push({ message, affectedItems });
  };

  // Every name the payload mentions, looked up once.
  const referenced = new Set<string>();
  for (const feature of data.features) referenced.add(feature.name);
  for (const strategy of data.featureStrategies) if (strategy.featureName) referenced.add(strategy.featureName);
  for (const environment of data.featureEnvironments ?? []) if (environment.featureName) referenced.add(environment.featureName);
  for (const tag of data.featureTags ?? []) referenced.add(tag.featureName);
  for (const entry of data.dependencies ?? []) {
    referenced.add(entry.feature);
    for (const parent of entry.dependencies) referenced.add(parent.feature);
  }
  const segmentNames = distinct((data.segments ?? []).map((segment) => segment.name));
  const [existing, catalogue] = await Promise.all([
    readExistingFeatures(d1, [...referenced], target.environment),
    readCatalogue(d1, segmentNames, (data.dependencies ?? []).length > 0),
  ]);

  // Step A: archived features are left out of the import entirely (reported as a warning).
  const archived = new Set<string>();
  for (const feature of data.features) if (existing.get(feature.name)?.archived) archived.add(feature.name);
  report(warnings, MESSAGES.archived, archived);

  const imported = new Map<string, ImportData['features'][number]>();
  const duplicates: string[] = [];
  for (const feature of data.features) {
    if (archived.has(feature.name)) continue;
    if (imported.has(feature.name)) duplicates.push(feature.name);
    imported.set(feature.name, feature);
  }
  const inTarget = (name: string) => {
    const row = existing.get(name);
    return row !== undefined && !row.archived && row.project === project.id;
  };
  /** A feature that chunk writes may hang things off: imported now, or already active in the target project. */
  const known = (name: string) => imported.has(name) || inTarget(name);

  // Step B: references.
  const unknownStrategies: string[] = [];
  const customStrategies: string[] = [];
  for (const strategy of data.featureStrategies) {
    const definition = catalogue.strategies.get(strategy.name);
    if (!definition) unknownStrategies.push(strategy.name);
    else if (!definition.builtIn) customStrategies.push(strategy.name);
  }
  report(errors, MESSAGES.unknownStrategies, unknownStrategies);

  const unsupportedContext: string[] = [];
  const newContextFields: PreparedContextField[] = [];
  const seenContext = new Set<string>();
  for (const field of data.contextFields ?? []) {
    const local = catalogue.contextFields.get(field.name);
    if (!local) {
      if (seenContext.has(field.name)) continue;
      seenContext.add(field.name);
      newContextFields.push({
        name: field.name,
        description: field.description ?? null,
        stickiness: field.stickiness ?? false,
        sortOrder: 0,
        legalValues: (field.legalValues ?? []).map((legal) => (legal.description === undefined ? { value: legal.value } : { ...legal })),
        project: field.project ? project.id : null,
      });
      continue;
    }
    const localValues = new Set(local.legalValues);
    const mismatch = (field.legalValues ?? []).some((legal) => !localValues.has(legal.value));
    if (mismatch || (local.project !== null && local.project !== project.id)) unsupportedContext.push(field.name);
  }
  report(errors, MESSAGES.contextFields, unsupportedContext);

  const otherProjects: string[] = [];
  for (const name of imported.keys()) {
    const row = existing.get(name);
    if (row && row.project !== project.id) otherProjects.push(`${name} (in project ${row.project})`);
  }
  report(errors, MESSAGES.otherProjects(project.id), otherProjects);
  report(errors, MESSAGES.duplicates, duplicates);

  if (project.featureNamingPattern) {
    const pattern = safePattern(project.featureNamingPattern);
    const mismatched = [...imported.keys()].filter((name) => !existing.has(name) && pattern !== null && !pattern.test(name)).sort();
    if (mismatched.length > 0) {
      let message = `Features imported into this project must match the project's feature naming pattern: "${project.featureNamingPattern}".`;
      if (project.featureNamingExample) message += ` Here's an example of a name that does match the pattern: "${project.featureNamingExample}".`;
      if (project.featureNamingDescription) message += ` The pattern's description is: "${project.featureNamingDescription}".`;
      errors.push({ message: `${message} The following features do not match the pattern:`, affectedItems: mismatched });
    }
  }

  const newFeatureCount = [...imported.keys()].filter((name) => !existing.has(name)).length;
  if (project.featureLimit !== null && newFeatureCount > 0 && targetRows.activeFeatureCount + newFeatureCount > project.featureLimit) {
    errors.push({
      message: `We detected you want to create ${newFeatureCount} new features to a project that already has ${targetRows.activeFeatureCount} existing features, exceeding the maximum limit of ${project.featureLimit}.`,
      affectedItems: [],
    });
  }

  // Segments: each listed name must exist globally or in the target project; ids are remapped by name.
  const segmentIdMap = new Map<number, number>();
  const missingSegments: string[] = [];
  for (const segment of data.segments ?? []) {
    const candidates = catalogue.segmentsByName.get(segment.name) ?? [];
    const local = candidates.find((candidate) => candidate.project === null || candidate.project === project.id);
    if (local) segmentIdMap.set(segment.id, local.id);
    else missingSegments.push(segment.name);
  }
  report(errors, MESSAGES.missingSegments, missingSegments);
  const listedSegmentIds = new Set((data.segments ?? []).map((segment) => segment.id));
  const undeclaredSegmentIds: string[] = [];
  for (const strategy of data.featureStrategies) {
    for (const id of strategy.segments ?? []) if (!listedSegmentIds.has(id)) undeclaredSegmentIds.push(String(id));
  }
  report(errors, MESSAGES.undeclaredSegmentIds, undeclaredSegmentIds);

  // Tags: the type must be declared in the payload or exist; only used declared types are created.
  const declaredTagTypes = new Map<string, PreparedTagType>();
  for (const tagType of data.tagTypes) if (!declaredTagTypes.has(tagType.name)) declaredTagTypes.set(tagType.name, prepareTagType(tagType));
  const unknownTagTypes: string[] = [];
  const usedNewTagTypes = new Map<string, PreparedTagType>();
  for (const tag of data.featureTags ?? []) {
    const type = tag.tagType ?? tag.type;
    if (type === undefined) continue;
    if (catalogue.tagTypes.has(type)) continue;
    const declared = declaredTagTypes.get(type);
    if (declared) usedNewTagTypes.set(type, declared);
    else unknownTagTypes.push(type);
  }
  report(errors, MESSAGES.unknownTagTypes, unknownTagTypes);

  // Anything hung off a feature needs that feature: imported, or active in the target project.
  const unknownFeatures: string[] = [];
  for (const strategy of data.featureStrategies) {
    if (strategy.featureName && !archived.has(strategy.featureName) && !known(strategy.featureName)) unknownFeatures.push(strategy.featureName);
  }
  for (const environment of data.featureEnvironments ?? []) {
    if (environment.featureName && !archived.has(environment.featureName) && !known(environment.featureName)) unknownFeatures.push(environment.featureName);
  }
  for (const tag of data.featureTags ?? []) {
    if (!archived.has(tag.featureName) && !known(tag.featureName)) unknownFeatures.push(tag.featureName);
  }

  // Dependencies: parents must be imported or active in the target project; no self-loops or cycles.
  const dependencies: PreparedDependency[] = [];
  const missingParents: string[] = [];
  const selfDependent: string[] = [];
  const graph = new Map<string, Set<string>>();
  for (const edge of catalogue.dependencies) {
    const parents = graph.get(edge.child) ?? new Set<string>();
    parents.add(edge.parent);
    graph.set(edge.child, parents);
  }
  for (const entry of data.dependencies ?? []) {
    const child = entry.feature;
    if (archived.has(child) || existing.get(child)?.archived) continue;
    if (!known(child)) unknownFeatures.push(child);
    for (const dependency of entry.dependencies) {
      const parent = dependency.feature;
      if (existing.get(parent)?.archived && !imported.has(parent)) continue;
      if (archived.has(parent)) continue;
      if (parent === child) {
        selfDependent.push(child);
        continue;
      }
      if (!known(parent)) {
        missingParents.push(parent);
        continue;
      }
      const enabled = dependency.enabled ?? true;
      dependencies.push({ child, parent, enabled, variants: enabled ? (dependency.variants ?? []) : [] });
      const parents = graph.get(child) ?? new Set<string>();
      parents.add(parent);
      graph.set(child, parents);
    }
  }
  report(errors, MESSAGES.unknownFeatures(project.id), unknownFeatures);
  report(errors, MESSAGES.missingDependencies, missingParents);
  report(errors, MESSAGES.selfDependencies, selfDependent);
  if (dependencies.length > 0) {
    const cycles = findCycles(graph);
    report(errors, MESSAGES.dependencyCycles, cycles);
    // Unleash's rule (and the features API's): dependencies are one level deep.
    const parents = new Set<string>();
    for (const list of graph.values()) for (const parent of list) parents.add(parent);
    const transitive: string[] = [];
    if (cycles.length === 0) {
      for (const dependency of dependencies) {
        if (parents.has(dependency.child)) transitive.push(dependency.child);
        if ((graph.get(dependency.parent)?.size ?? 0) > 0) transitive.push(dependency.parent);
      }
    }
    report(errors, MESSAGES.transitiveDependencies, transitive);
  }

  // Strategies and variants, normalised as Unleash stores them.
  const noVariable: string[] = [];
  const over: string[] = [];
  const strategiesByFeature = new Map<string, PreparedStrategy[]>();
  for (const strategy of data.featureStrategies) {
    const name = strategy.featureName;
    if (!name || archived.has(name) || !known(name)) continue;
    const variants = fixWeights(strategy.variants ?? []);
    if (variants === 'no-variable') noVariable.push(`strategy ${strategy.name} of ${name}`);
    else if (variants === 'over') over.push(`strategy ${strategy.name} of ${name}`);
    const prepared = prepareStrategy(strategy, name, project.defaultStickiness, Array.isArray(variants) ? variants : [], segmentIdMap);
    const list = strategiesByFeature.get(name) ?? [];
    list.push(prepared);
    strategiesByFeature.set(name, list);
  }
  const environmentsByFeature = new Map<string, PreparedEnvironment>();
  for (const environment of data.featureEnvironments ?? []) {
    const name = environment.featureName;
    if (!name || archived.has(name) || !known(name)) continue;
    const variants = fixWeights(environment.variants ?? []);
    if (variants === 'no-variable') noVariable.push(name);
    else if (variants === 'over') over.push(name);
    environmentsByFeature.set(name, { featureName: name, enabled: environment.enabled, variants: Array.isArray(variants) ? variants.map(toVariantDoc) : [] });
  }
  // Constraint values, as Unleash checks them when it creates a strategy.
  const legalValues = new Map<string, Set<string>>();
  for (const [name, field] of catalogue.contextFields) if (field.legalValues.length > 0) legalValues.set(name, new Set(field.legalValues));
  for (const field of newContextFields) if (field.legalValues.length > 0) legalValues.set(field.name, new Set(field.legalValues.map((legal) => legal.value)));
  const invalidConstraints: string[] = [];
  for (const strategy of data.featureStrategies) {
    const name = strategy.featureName;
    if (!name || archived.has(name) || !known(name)) continue;
    for (const constraint of strategy.constraints ?? []) {
      const problem = constraintProblem(constraint, legalValues.get(constraint.contextName));
      if (problem) invalidConstraints.push(`${name}: ${constraint.contextName} ${constraint.operator} (${problem})`);
    }
  }
  report(errors, MESSAGES.invalidConstraints, invalidConstraints);
  report(errors, MESSAGES.noVariableVariant, noVariable);
  report(errors, MESSAGES.weightsOver, over);

  const tagsByFeature = new Map<string, PreparedTag[]>();
  for (const tag of data.featureTags ?? []) {
    const type = tag.tagType ?? tag.type;
    if (type === undefined || archived.has(tag.featureName) || !known(tag.featureName)) continue;
    const list = tagsByFeature.get(tag.featureName) ?? [];
    list.push({ featureName: tag.featureName, type, value: tag.tagValue });
    tagsByFeature.set(tag.featureName, list);
  }

  // Warnings and permissions.
  report(warnings, MESSAGES.customStrategies, customStrategies);
  report(warnings, MESSAGES.existing, [...imported.keys()].filter((name) => inTarget(name)));
  const needed = new Set<Permission>([UPDATE_FEATURE]);
  if (usedNewTagTypes.size > 0) needed.add(CREATE_TAG_TYPE);
  if (newContextFields.length > 0) needed.add(CREATE_CONTEXT_FIELD);
  if ([...imported.keys()].some((name) => existing.get(name)?.hasStrategies)) needed.add(DELETE_FEATURE_STRATEGY);
  if (data.featureStrategies.length > 0) needed.add(CREATE_FEATURE_STRATEGY);
  if ((data.featureEnvironments ?? []).some((environment) => (environment.variants ?? []).length > 0)) needed.add(UPDATE_FEATURE_ENVIRONMENT_VARIANTS);
  if (newFeatureCount > 0) needed.add(CREATE_FEATURE);
  const missingPermissions = PERMISSION_ORDER.filter(([permission]) => needed.has(permission) && !hasPermission(holder, permission)).map(
    ([, displayName]) => displayName,
  );

  // The prepared import: one slice per feature, imported features first in payload order.
  const slices: FeatureSlice[] = [];
  const sliceOf = (name: string, feature: PreparedFeature | null): FeatureSlice => {
    const environment = environmentsByFeature.get(name) ?? null;
    const strategies = strategiesByFeature.get(name) ?? [];
    // An imported feature's strategies are replaced, so an enabled one among them settles it
    // here; otherwise the chunk adds the strategy only if the feature has no enabled one then.
    const settled = feature !== null && strategies.some((strategy) => !strategy.disabled);
    return {
      name,
      feature,
      strategies,
      environment,
      autoStrategy: environment?.enabled && !settled ? autoStrategy(name, project.defaultStickiness, targetRows.defaultStrategy) : null,
      tags: tagsByFeature.get(name) ?? [],
    };
  };
  for (const [name, feature] of imported) {
    slices.push(
      sliceOf(name, {
        name,
        description: feature.description ?? null,
        type: feature.type ?? 'release',
        stale: feature.stale ?? false,
        impressionData: feature.impressionData ?? false,
        archived: feature.archived ?? false,
      }),
    );
  }
  // Existing features the payload touches without importing them (Unleash adds to them).
  const touched = new Set([...strategiesByFeature.keys(), ...environmentsByFeature.keys(), ...tagsByFeature.keys()]);
  for (const name of touched) if (!imported.has(name)) slices.push(sliceOf(name, null));

  return {
    target,
    errors,
    warnings,
    missingPermissions,
    activeJob: targetRows.activeJob,
    prepared: {
      tagTypes: [...usedNewTagTypes.values()],
      contextFields: newContextFields,
      slices,
      dependencies,
      featureCount: imported.size,
    },
  };
}

const SINGLE_VALUE_OPERATORS = new Set(['NUM_EQ', 'NUM_GT', 'NUM_GTE', 'NUM_LT', 'NUM_LTE', 'DATE_AFTER', 'DATE_BEFORE', 'SEMVER_EQ', 'SEMVER_GT', 'SEMVER_LT']);
const NUMBER = /^-?\d+(\.\d+)?$/;
const SEMVER = /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/;

/** What is wrong with a constraint's value(s), if anything (Unleash's constraint rules). */
function constraintProblem(constraint: ImportedConstraint, legal: Set<string> | undefined): string | null {
  const single = SINGLE_VALUE_OPERATORS.has(constraint.operator);
  if (single) {
    const value = constraint.value;
    if (value === undefined) return 'value is required';
    if (constraint.operator.startsWith('NUM_') && !NUMBER.test(value.trim())) return `${value} is not a number`;
    if (constraint.operator.startsWith('DATE_') && parseDateTime(value) === undefined) return `${value} is not a date`;
    if (constraint.operator.startsWith('SEMVER_') && !SEMVER.test(value)) return `${value} is not a semver version`;
    if (legal && !legal.has(value)) return `${value} is not a legal value`;
    return null;
  }
  if (legal) {
    const illegal = (constraint.values ?? []).find((value) => !legal.has(value));
    if (illegal !== undefined) return `${illegal} is not a legal value`;
  }
  return null;
}

/**
 * Project naming patterns are anchored like Unleash's; an unusable one checks nothing. RE2
 * matches in linear time, so a pathological pattern cannot stall an import.
 */
function safePattern(pattern: string): { test(name: string): boolean } | null {
  try {
    const regex = RE2JS.compile(`^${pattern}$`);
    return { test: (name) => regex.matcher(name).find() };
  } catch {
    return null;
  }
}

function toVariantDoc(variant: ImportedVariant): VariantDoc {
  const doc: VariantDoc = { name: variant.name, weight: variant.weight, weightType: variant.weightType ?? 'variable', stickiness: variant.stickiness ?? 'default' };
  if (variant.payload) doc.payload = variant.payload;
  if (variant.overrides) doc.overrides = variant.overrides;
  return doc;
}

function prepareStrategy(
  strategy: ImportedStrategy,
  featureName: string,
  defaultStickiness: string,
  variants: StrategyVariantDoc[],
  segmentIdMap: Map<number, number>,
): PreparedStrategy {
  const parameters: Record<string, string> = { ...(strategy.parameters ?? {}) };
  if (strategy.name === 'flexibleRollout') {
    parameters.rollout ??= '100';
    parameters.stickiness ??= defaultStickiness;
    parameters.groupId ??= featureName;
  }
  return {
    id: crypto.randomUUID(),
    featureName,
    name: strategy.name,
    title: strategy.title ?? null,
    parameters,
    constraints: (strategy.constraints ?? []).map((constraint) => ({
      contextName: constraint.contextName,
      operator: constraint.operator,
      caseInsensitive: constraint.caseInsensitive ?? false,
      inverted: constraint.inverted ?? false,
      values: constraint.values ?? [],
      ...(constraint.value === undefined ? {} : { value: constraint.value }),
    })),
    variants,
    sortOrder: strategy.sortOrder ?? 9999,
    disabled: strategy.disabled ?? false,
    segments: distinct((strategy.segments ?? []).flatMap((id) => {
      const local = segmentIdMap.get(id);
      return local === undefined ? [] : [String(local)];
    })).map(Number),
  };
}

/** What enabling a feature with no enabled strategy adds: the project default, else a 100% rollout. */
function autoStrategy(featureName: string, defaultStickiness: string, projectDefault: unknown): PreparedStrategy {
  const fallback: PreparedStrategy = {
    id: crypto.randomUUID(),
    featureName,
    name: 'flexibleRollout',
    title: null,
    parameters: { rollout: '100', stickiness: defaultStickiness, groupId: featureName },
    constraints: [],
    variants: [],
    sortOrder: 0,
    disabled: false,
    segments: [],
  };
  if (typeof projectDefault !== 'object' || projectDefault === null || !('name' in projectDefault) || typeof projectDefault.name !== 'string') {
    return fallback;
  }
  const record = projectDefault as { name: string; title?: unknown; parameters?: unknown; constraints?: unknown; variants?: unknown };
  const parameters: Record<string, string> = {};
  if (typeof record.parameters === 'object' && record.parameters !== null) {
    for (const [key, value] of Object.entries(record.parameters)) parameters[key] = String(value);
  }
  if (record.name === 'flexibleRollout') parameters.groupId = featureName;
  return {
    ...fallback,
    name: record.name,
    title: typeof record.title === 'string' ? record.title : null,
    parameters,
    constraints: Array.isArray(record.constraints) ? (record.constraints as PreparedStrategy['constraints']) : [],
    variants: Array.isArray(record.variants) ? (record.variants as PreparedStrategy['variants']) : [],
  };
}

/** 403 naming the permissions the import needs and the caller lacks (Unleash's PermissionError wording). */
export function assertPermissions(missing: string[]): void {
  if (missing.length === 0) return;
  const quoted = missing.map((name) => `"${name}"`).join(', ');
  const message = `You don't have the required permissions to perform this operation. To perform this action, you need one of the following permissions: ${quoted}.`;
  throw new ApiError(403, 'NoAccessError', message, [{ message }], { permissions: missing });
}
