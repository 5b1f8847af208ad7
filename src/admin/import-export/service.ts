/**
 * The import's checks that need the whole payload (see collector.ts for the ones made
 * element by element): the target (404/400), the payload's references against D1, EVERY
 * problem (unleash-behaviour §6.4 messages, each with its affected items), the warnings and
 * the permissions the import needs.
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
import { ApiError, badRequest, notFound } from '../../http/errors';
import { BY_ENVIRONMENT, BY_LINK, BY_STRATEGY, BY_TAG, constraintText, type ImportCollector } from './collector';
import type { AutoStrategyTemplate, ImportContext, ImportTarget, PreparedContextField, PreparedDependency, PreparedTagType } from './plan';
import { constraintProblem, safePattern } from '../features/rules';
import type { ImportData } from './schema';
import { readExistingFeatures, readSegmentsAndDependencies, readTarget, type TargetRows } from './store/reads';

// A type alias (not an interface) so that it fits ErrorDetail's index signature.
type Problem = {
  message: string;
  affectedItems: string[];
};

export interface ImportAnalysis {
  target: ImportTarget;
  errors: Problem[];
  warnings: Problem[];
  /** Display names of the permissions the caller lacks, in Unleash's order. */
  missingPermissions: string[];
  /** What the chunk statements need besides the staged rows. */
  context: ImportContext;
  dependencies: PreparedDependency[];
  /** Features imported (created or updated), archived ones left out. */
  featureCount: number;
  /** An import job into the same project/environment that is still queued or running. */
  activeJob: string | null;
  /**
   * What Unleash answers for the first link it cannot write (a flag that does not exist, too
   * many links, not a URL): checked after every other problem, as Unleash meets it while
   * writing; the validate endpoint does not report it, as Unleash's does not.
   */
  linkError: ApiError | null;
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
function assertTarget(target: ImportTarget, rows: TargetRows): void {
  if (!rows.project || rows.project.archivedAt !== null) throw notFound(`Active project with id ${target.project} does not exist`);
  if (!rows.environmentExists) throw notFound(`Could not find environment with name: ${target.environment}`);
  if (!rows.attached) throw badRequest('You have not added the current environment to the project');
}

function distinct(items: Iterable<string>): string[] {
  return [...new Set(items)];
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

/**
 * The second half of the validation, once the body has been read: the target (404/400), the
 * payload's references against D1, collecting EVERY problem (unleash-behaviour §6.4
 * messages, each with its affected items), the warnings, the permissions the import needs,
 * and the context its chunks are applied with.
 */
export async function finishImport(
  d1: D1Database,
  holder: PermissionHolder,
  target: ImportTarget,
  collected: ImportCollector,
): Promise<ImportAnalysis> {
  const targetRows = await readTarget(d1, target);
  assertTarget(target, targetRows);
  const project = targetRows.project!;
  const data = collected.small;
  const errors: Problem[] = [];
  const warnings: Problem[] = [];
  const report = (list: Problem[], message: string, items: Iterable<string>) => {
    const affectedItems = distinct(items);
    if (affectedItems.length > 0) list.push({ message, affectedItems });
  };

  // Every name the payload mentions, looked up once.
  const lookup = new Set(collected.names.keys());
  for (const entry of data.dependencies) {
    lookup.add(entry.feature);
    for (const parent of entry.dependencies) lookup.add(parent.feature);
  }
  const segmentNames = distinct(data.segments.map((segment) => segment.name));
  const [existing, catalogue] = await Promise.all([
    readExistingFeatures(d1, [...lookup], target.environment),
    readSegmentsAndDependencies(d1, segmentNames, data.dependencies.length > 0),
  ]);

  // Step A: archived features are left out of the import entirely (reported as a warning).
  const archived = new Set<string>();
  for (const name of collected.importedNames) if (existing.get(name)?.archived) archived.add(name);
  report(warnings, MESSAGES.archived, archived);

  const imported = new Set(collected.importedNames.filter((name) => !archived.has(name)));
  const duplicates = collected.duplicates.filter((name) => !archived.has(name));
  const inTarget = (name: string) => {
    const row = existing.get(name);
    return row !== undefined && !row.archived && row.project === project.id;
  };
  /** A feature that chunk writes may hang things off: imported now, or already active in the target project. */
  const known = (name: string) => imported.has(name) || inTarget(name);

  // Step B: references.
  const unknownStrategies: string[] = [];
  const customStrategies: string[] = [];
  for (const name of collected.strategyTypes) {
    const definition = collected.catalogue.strategies.get(name);
    if (!definition) unknownStrategies.push(name);
    else if (!definition.builtIn) customStrategies.push(name);
  }
  report(errors, MESSAGES.unknownStrategies, unknownStrategies);

  const unsupportedContext: string[] = [];
  const newContextFields: PreparedContextField[] = [];
  const seenContext = new Set<string>();
  for (const field of data.contextFields) {
    const local = collected.catalogue.contextFields.get(field.name);
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
  for (const name of imported) {
    const row = existing.get(name);
    if (row && row.project !== project.id) otherProjects.push(`${name} (in project ${row.project})`);
  }
  report(errors, MESSAGES.otherProjects(project.id), otherProjects);
  report(errors, MESSAGES.duplicates, duplicates);

  if (project.featureNamingPattern) {
    const pattern = safePattern(project.featureNamingPattern);
    const mismatched = [...imported].filter((name) => !existing.has(name) && pattern !== null && !pattern.test(name)).sort();
    if (mismatched.length > 0) {
      let message = `Features imported into this project must match the project's feature naming pattern: "${project.featureNamingPattern}".`;
      if (project.featureNamingExample)
        message += ` Here's an example of a name that does match the pattern: "${project.featureNamingExample}".`;
      if (project.featureNamingDescription) message += ` The pattern's description is: "${project.featureNamingDescription}".`;
      errors.push({ message: `${message} The following features do not match the pattern:`, affectedItems: mismatched });
    }
  }

  let newFeatureCount = 0;
  for (const name of imported) if (!existing.has(name)) newFeatureCount++;
  if (project.featureLimit !== null && newFeatureCount > 0 && targetRows.activeFeatureCount + newFeatureCount > project.featureLimit) {
    errors.push({
      message: `We detected you want to create ${newFeatureCount} new features to a project that already has ${targetRows.activeFeatureCount} existing features, exceeding the maximum limit of ${project.featureLimit}.`,
      affectedItems: [],
    });
  }

  // Segments: each listed name must exist globally or in the target project; ids are remapped by name.
  const segmentMap: Record<string, number> = {};
  const missingSegments: string[] = [];
  for (const segment of data.segments) {
    const candidates = catalogue.segmentsByName.get(segment.name) ?? [];
    const local = candidates.find((candidate) => candidate.project === null || candidate.project === project.id);
    if (local) segmentMap[String(segment.id)] = local.id;
    else missingSegments.push(segment.name);
  }
  report(errors, MESSAGES.missingSegments, missingSegments);
  const listedSegmentIds = new Set(data.segments.map((segment) => segment.id));
  report(errors, MESSAGES.undeclaredSegmentIds, [...collected.usedSegmentIds].filter((id) => !listedSegmentIds.has(id)).map(String));

  // Tags: the type must be declared in the payload or exist; only used declared types are created.
  const declaredTagTypes = new Map<string, PreparedTagType>();
  for (const tagType of data.tagTypes) if (!declaredTagTypes.has(tagType.name)) declaredTagTypes.set(tagType.name, prepareTagType(tagType));
  const unknownTagTypes: string[] = [];
  const usedNewTagTypes = new Map<string, PreparedTagType>();
  for (const type of collected.usedTagTypes) {
    if (collected.catalogue.tagTypes.has(type)) continue;
    const declared = declaredTagTypes.get(type);
    if (declared) usedNewTagTypes.set(type, declared);
    else unknownTagTypes.push(type);
  }
  report(errors, MESSAGES.unknownTagTypes, unknownTagTypes);

  // Anything hung off a feature needs that feature: imported, or active in the target project.
  const unknownFeatures: string[] = [];
  for (const [name, info] of collected.names) {
    if (info.flags & (BY_STRATEGY | BY_ENVIRONMENT | BY_TAG) && !archived.has(name) && !known(name)) unknownFeatures.push(name);
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
  for (const entry of data.dependencies) {
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

  // Constraint values and variant weights, for the features the import writes.
  const legalValues = new Map<string, Set<string>>();
  for (const field of newContextFields)
    if (field.legalValues.length > 0) legalValues.set(field.name, new Set(field.legalValues.map((legal) => legal.value)));
  const problems = [...collected.problems];
  for (const pending of collected.pendingConstraints) {
    const problem = constraintProblem(pending.constraint, legalValues.get(pending.constraint.contextName));
    if (problem)
      problems.push({
        list: 'invalidConstraints',
        rank: 0,
        seq: pending.seq,
        feature: pending.feature,
        text: constraintText(pending.feature, pending.constraint, problem),
      });
  }
  problems.sort((a, b) => a.rank - b.rank || a.seq - b.seq);
  const listed = (list: string) =>
    problems
      .filter((problem) => problem.list === list && !archived.has(problem.feature) && known(problem.feature))
      .map((problem) => problem.text);
  report(errors, MESSAGES.invalidConstraints, listed('invalidConstraints'));
  report(errors, MESSAGES.noVariableVariant, listed('noVariable'));
  report(errors, MESSAGES.weightsOver, listed('over'));

  // Links: the first one Unleash would stop at, in payload order (an unknown flag is met before its link's own problems).
  let linkError = collected.linkProblem;
  for (const [name, info] of collected.names) {
    if (!(info.flags & BY_LINK) || info.firstLink === undefined || known(name)) continue;
    if (linkError === null || info.firstLink <= linkError.seq) {
      linkError = { seq: info.firstLink, error: notFound(`Could not find feature with name ${name}`) };
    }
  }

  // Warnings and permissions.
  report(warnings, MESSAGES.customStrategies, customStrategies);
  report(
    warnings,
    MESSAGES.existing,
    [...imported].filter((name) => inTarget(name)),
  );
  const needed = new Set<Permission>([UPDATE_FEATURE]);
  if (usedNewTagTypes.size > 0) needed.add(CREATE_TAG_TYPE);
  if (newContextFields.length > 0) needed.add(CREATE_CONTEXT_FIELD);
  if ([...imported].some((name) => existing.get(name)?.hasStrategies)) needed.add(DELETE_FEATURE_STRATEGY);
  if (collected.strategyCount > 0) needed.add(CREATE_FEATURE_STRATEGY);
  if (collected.environmentVariants) needed.add(UPDATE_FEATURE_ENVIRONMENT_VARIANTS);
  if (newFeatureCount > 0) needed.add(CREATE_FEATURE);
  // Checked where the import lands, as Unleash does: project permissions in the target project,
  // environment ones in the target environment, root ones anywhere.
  const missingPermissions = PERMISSION_ORDER.filter(
    ([permission]) => needed.has(permission) && !hasPermission(holder, permission, target.project, target.environment),
  ).map(([, displayName]) => displayName);

  return {
    target,
    errors,
    warnings,
    missingPermissions,
    activeJob: targetRows.activeJob,
    linkError: linkError?.error ?? null,
    context: {
      project: target.project,
      environment: target.environment,
      defaultStickiness: project.defaultStickiness,
      segmentMap,
      skip: [...archived],
      auto: autoStrategyTemplate(project.defaultStickiness, targetRows.defaultStrategy),
      tagTypes: [...usedNewTagTypes.values()],
      contextFields: newContextFields,
    },
    dependencies,
    featureCount: imported.size,
  };
}

/** What enabling a feature with no enabled strategy adds: the project default, else a 100% rollout. */
function autoStrategyTemplate(defaultStickiness: string, projectDefault: unknown): AutoStrategyTemplate {
  const fallback: AutoStrategyTemplate = {
    name: 'flexibleRollout',
    title: null,
    parameters: { rollout: '100', stickiness: defaultStickiness, groupId: '' },
    constraints: [],
    variants: [],
  };
  if (
    typeof projectDefault !== 'object' ||
    projectDefault === null ||
    !('name' in projectDefault) ||
    typeof projectDefault.name !== 'string'
  ) {
    return fallback;
  }
  const record = projectDefault as { name: string; title?: unknown; parameters?: unknown; constraints?: unknown; variants?: unknown };
  const parameters: Record<string, string> = {};
  if (typeof record.parameters === 'object' && record.parameters !== null) {
    for (const [key, value] of Object.entries(record.parameters)) parameters[key] = String(value);
  }
  // The feature's name goes here when the strategy is written (json_set keeps the key's place).
  if (record.name === 'flexibleRollout') parameters.groupId = '';
  return {
    name: record.name,
    title: typeof record.title === 'string' ? record.title : null,
    parameters,
    constraints: Array.isArray(record.constraints) ? (record.constraints as AutoStrategyTemplate['constraints']) : [],
    variants: Array.isArray(record.variants) ? (record.variants as AutoStrategyTemplate['variants']) : [],
  };
}

/** 403 naming the permissions the import needs and the caller lacks (Unleash's PermissionError wording). */
export function assertPermissions(missing: string[]): void {
  if (missing.length === 0) return;
  const quoted = missing.map((name) => `"${name}"`).join(', ');
  const message = `You don't have the required permissions to perform this operation. To perform this action, you need one of the following permissions: ${quoted}.`;
  throw new ApiError(403, 'NoAccessError', message, [{ message }], { permissions: missing });
}
