// Flags move as Unleash's own export format (one project and one environment per payload),
// written through our import path. The same normal form decides whether a flag is already
// there (idempotence) and whether the copy is exact.

const pick = (object, keys) => Object.fromEntries(keys.filter((key) => object[key] !== undefined).map((key) => [key, object[key]]));

function sortedObject(object) {
  return Object.fromEntries(
    Object.keys(object ?? {})
      .sort()
      .map((key) => [key, String(object[key])]),
  );
}

function normalVariant(variant) {
  return {
    name: variant.name,
    // Exactly as the source has them: which variant a user gets depends on every weight.
    weight: variant.weight,
    weightType: variant.weightType ?? 'variable',
    stickiness: variant.stickiness ?? 'default',
    payload: variant.payload ? { type: variant.payload.type, value: variant.payload.value } : null,
    overrides: (variant.overrides ?? []).map(({ contextName, values }) => ({ contextName, values })),
  };
}

/** Equal as JSON: same values, same key order. */
export const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

export function normalConstraint(constraint) {
  return {
    contextName: constraint.contextName,
    operator: constraint.operator,
    values: constraint.values ?? [],
    value: constraint.value ?? '',
    inverted: Boolean(constraint.inverted),
    caseInsensitive: Boolean(constraint.caseInsensitive),
  };
}

/** One flag of an export, in one environment, without ids or order the source may not keep. */
function normalFlags(exported) {
  const segmentNames = new Map((exported.segments ?? []).map((segment) => [segment.id, segment.name]));
  const flags = new Map();
  for (const feature of exported.features ?? []) {
    flags.set(feature.name, {
      name: feature.name,
      type: feature.type ?? 'release',
      description: feature.description || null,
      stale: Boolean(feature.stale),
      impressionData: Boolean(feature.impressionData),
      archived: Boolean(feature.archived),
      enabled: false,
      variants: [],
      strategies: [],
      tags: [],
      dependencies: [],
    });
  }
  for (const strategy of exported.featureStrategies ?? []) {
    flags.get(strategy.featureName)?.strategies.push({
      name: strategy.name,
      title: strategy.title || null,
      disabled: Boolean(strategy.disabled),
      parameters: sortedObject(strategy.parameters),
      constraints: (strategy.constraints ?? []).map(normalConstraint),
      variants: (strategy.variants ?? []).map(normalVariant),
      segments: (strategy.segments ?? []).map((id) => segmentNames.get(id) ?? `#${id}`).sort(),
    });
  }
  for (const environment of exported.featureEnvironments ?? []) {
    const flag = flags.get(environment.featureName ?? environment.name);
    if (!flag) continue;
    flag.enabled = Boolean(environment.enabled);
    flag.variants = (environment.variants ?? []).map(normalVariant);
  }
  for (const tag of exported.featureTags ?? []) {
    flags.get(tag.featureName)?.tags.push(`${tag.tagType ?? tag.type}:${tag.tagValue ?? tag.value}`);
  }
  for (const dependency of exported.dependencies ?? []) {
    const flag = flags.get(dependency.feature);
    if (!flag) continue;
    for (const parent of dependency.dependencies ?? []) {
      flag.dependencies.push({ feature: parent.feature, enabled: parent.enabled !== false, variants: [...(parent.variants ?? [])].sort() });
    }
  }
  for (const flag of flags.values()) {
    flag.tags.sort();
    flag.dependencies.sort((a, b) => a.feature.localeCompare(b.feature));
  }
  return flags;
}

/** Per flag name: `missing` on the target, `same`, or `different` (with both normal forms). */
export function compareExports(sourceExport, targetExport) {
  const source = normalFlags(sourceExport);
  const target = normalFlags(targetExport);
  const result = new Map();
  for (const [name, flag] of source) {
    const ours = target.get(name);
    if (!ours) result.set(name, { state: 'missing' });
    else if (same(ours, flag)) result.set(name, { state: 'same' });
    else result.set(name, { state: 'different', source: flag, target: ours });
  }
  return result;
}

/**
 * The part of an export our import accepts, for the given flags: the import schema knows
 * 6.10.1's fields; newer sources add some (links, lifecycle) that are copied separately or not at all.
 */
export function importPayload(exported, names, project, environment) {
  const wanted = new Set(names);
  const features = exported.features
    .filter((feature) => wanted.has(feature.name))
    .map((feature) => ({ ...pick(feature, ['name', 'description', 'type', 'stale', 'impressionData']), project }));
  // The export lists each flag's strategies in their order; sortOrder keeps that order here.
  const position = new Map();
  const featureStrategies = exported.featureStrategies
    .filter((strategy) => wanted.has(strategy.featureName))
    .map((strategy) => ({
      ...pick(strategy, ['name', 'featureName', 'title', 'disabled', 'parameters', 'segments']),
      sortOrder: position.set(strategy.featureName, (position.get(strategy.featureName) ?? -1) + 1).get(strategy.featureName),
      constraints: (strategy.constraints ?? []).map((constraint) =>
        pick(constraint, ['contextName', 'operator', 'values', 'value', 'caseInsensitive', 'inverted']),
      ),
      variants: (strategy.variants ?? []).map((variant) => pick(variant, ['name', 'weight', 'weightType', 'stickiness', 'payload'])),
    }));
  const featureEnvironments = exported.featureEnvironments
    .filter((environmentRow) => wanted.has(environmentRow.featureName))
    .map((environmentRow) => ({
      name: environmentRow.name ?? environmentRow.featureName,
      featureName: environmentRow.featureName,
      enabled: Boolean(environmentRow.enabled),
      variants: (environmentRow.variants ?? []).map((variant) =>
        pick(variant, ['name', 'weight', 'weightType', 'stickiness', 'payload', 'overrides']),
      ),
    }));
  const usedSegments = new Set(featureStrategies.flatMap((strategy) => strategy.segments ?? []));
  return {
    project,
    environment,
    data: {
      features,
      featureStrategies,
      featureEnvironments,
      featureTags: (exported.featureTags ?? [])
        .filter((tag) => wanted.has(tag.featureName))
        .map((tag) => ({ featureName: tag.featureName, tagType: tag.tagType ?? tag.type, tagValue: tag.tagValue ?? tag.value })),
      contextFields: (exported.contextFields ?? []).map((field) =>
        pick(field, ['name', 'description', 'stickiness', 'sortOrder', 'legalValues']),
      ),
      segments: (exported.segments ?? []).filter((segment) => usedSegments.has(segment.id)).map(({ id, name }) => ({ id, name })),
      tagTypes: (exported.tagTypes ?? []).map((tagType) => pick(tagType, ['name', 'description', 'icon'])),
      dependencies: (exported.dependencies ?? []).filter((dependency) => wanted.has(dependency.feature)),
    },
  };
}
