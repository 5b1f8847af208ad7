// The generated import payload of bench/import: deterministic, no ids or timestamps.

/** N features, each with 2 constrained strategies (one with variants), env variants and 2 tags. */
export function generate(n, run, offset = 0) {
  const features = [];
  const featureStrategies = [];
  const featureEnvironments = [];
  const featureTags = [];
  for (let i = offset; i < offset + n; i++) {
    const name = `bench-${run}-${String(i).padStart(6, '0')}`;
    features.push({ name, type: ['release', 'experiment', 'operational'][i % 3], description: `generated flag ${i}` });
    featureStrategies.push(
      {
        name: 'flexibleRollout',
        featureName: name,
        sortOrder: 0,
        parameters: { rollout: String(i % 101), stickiness: 'default', groupId: name },
        constraints: [
          { contextName: 'userId', operator: 'IN', values: [String(i), String(i + 1)] },
          { contextName: 'appName', operator: 'STR_STARTS_WITH', values: ['web'], caseInsensitive: true },
        ],
        variants: [
          { name: 'on', weight: 500, weightType: 'variable', stickiness: 'default', payload: { type: 'string', value: `v${i}` } },
          { name: 'off', weight: 500, weightType: 'variable', stickiness: 'default' },
        ],
      },
      {
        name: 'default',
        featureName: name,
        sortOrder: 1,
        constraints: [{ contextName: 'currentTime', operator: 'DATE_AFTER', value: '2026-01-01T00:00:00.000Z' }],
      },
    );
    // As Unleash exports it (`name` is the feature's; Unleash reads that one).
    featureEnvironments.push({
      name,
      featureName: name,
      environment: 'development',
      enabled: i % 2 === 0,
      variants: [
        { name: 'a', weight: 500, weightType: 'variable', stickiness: 'default' },
        { name: 'b', weight: 500, weightType: 'variable', stickiness: 'default' },
      ],
    });
    featureTags.push(
      { featureName: name, tagType: 'simple', tagValue: `tag-${i % 20}` },
      { featureName: name, tagType: 'team', tagValue: `team-${i % 10}` },
    );
  }
  return {
    project: 'default',
    environment: 'development',
    data: {
      features,
      featureStrategies,
      featureEnvironments,
      featureTags,
      tagTypes: [{ name: 'simple' }, { name: 'team', description: 'Teams' }],
      contextFields: [],
    },
  };
}
