// Reading an Unleash 6.x, 7.x or 8.x through its documented admin API only. The shapes that
// differ between versions are handled here, so the copy steps see one shape.

/** `{ major, minor, text }` of the source, from `/api/admin/ui-config`. */
export async function detectVersion(source) {
  const answer = await source.send('GET', '/api/admin/ui-config', undefined, { allowed: [401, 403] });
  if (answer.status === 401 || answer.status === 403) {
    throw new Error(
      `source: the token was refused on its admin API (${answer.status}). Give an admin API token or an admin's personal access token, not a client or frontend token.`,
    );
  }
  const config = answer.body;
  const text = config?.versionInfo?.current?.oss || config?.version || '';
  const match = /^(\d+)\.(\d+)/.exec(text);
  if (!match) throw new Error(`cannot tell the source's version from /api/admin/ui-config (version "${text}")`);
  const major = Number(match[1]);
  if (major < 6 || major > 8) throw new Error(`source is Unleash ${text}; this migration reads 6.x to 8.x`);
  return { major, minor: Number(match[2]), text, enterprise: Boolean(config?.versionInfo?.current?.enterprise) };
}

/** An optional read: the body, or null where this source does not offer the operation (OSS, older versions). */
async function optional(source, path) {
  const answer = await source.send('GET', path, undefined, { allowed: [401, 403, 404] });
  if (answer.status === 404 || answer.status === 401) return null;
  if (answer.status === 403) {
    // A 403 here is a missing Enterprise feature, or a token that may not read it; both are reported.
    return null;
  }
  return answer.body;
}

export async function readEnvironments(source) {
  const { environments } = await source.get('/api/admin/environments');
  // `requiredApprovals`: an Enterprise source's predefined change requests (null, or absent, on OSS).
  return environments.map(({ name, type, enabled, sortOrder, requiredApprovals }) => ({
    name,
    type,
    enabled,
    sortOrder,
    requiredApprovals: requiredApprovals ?? null,
  }));
}

/**
 * Each project's change-request settings, `{environment, changeRequestEnabled, requiredApprovals}`
 * per environment, from an Enterprise source; null where the source has none (OSS: not asked,
 * as it answers 404), or a project whose settings it does not answer.
 */
export async function readChangeRequestConfigs(source, version, projectIds) {
  if (!version.enterprise) return null;
  const configs = new Map();
  for (const id of projectIds) {
    const config = await optional(source, `/api/admin/projects/${encodeURIComponent(id)}/change-requests/config`);
    if (Array.isArray(config)) configs.set(id, config);
  }
  return configs;
}

export async function readProjects(source, version) {
  const { projects } = await source.get('/api/admin/projects');
  const result = [];
  for (const listed of projects) {
    if (listed.archivedAt) continue;
    // 6.x answers the project itself; 7.x and 8.x moved it to /overview.
    const detail =
      version.major >= 7
        ? await source.get(`/api/admin/projects/${encodeURIComponent(listed.id)}/overview`)
        : await source.get(`/api/admin/projects/${encodeURIComponent(listed.id)}`);
    result.push({
      id: listed.id,
      name: listed.name,
      description: listed.description ?? null,
      mode: detail.mode ?? listed.mode ?? 'open',
      defaultStickiness: detail.defaultStickiness ?? 'default',
      environments: (detail.environments ?? []).map((environment) => ({
        name: environment.environment,
        defaultStrategy: environment.defaultStrategy ?? null,
      })),
    });
  }
  return result;
}

export async function readContextFields(source) {
  const fields = await source.get('/api/admin/context');
  return fields.map(({ name, description, stickiness, sortOrder, legalValues, project }) => ({
    name,
    description: description ?? '',
    stickiness: Boolean(stickiness),
    sortOrder: sortOrder ?? 0,
    legalValues: (legalValues ?? []).map(({ value, description: about }) => (about ? { value, description: about } : { value })),
    ...(project ? { project } : {}),
  }));
}

export async function readSegments(source) {
  const { segments } = await source.get('/api/admin/segments');
  return segments.map(({ id, name, description, constraints, project }) => ({
    id,
    name,
    description: description ?? null,
    constraints,
    project: project ?? null,
  }));
}

/** Custom strategy definitions (the built-in ones are not `editable`). */
export async function readCustomStrategies(source) {
  const { strategies } = await source.get('/api/admin/strategies');
  return strategies
    .filter((strategy) => strategy.editable)
    .map(({ name, title, description, parameters, deprecated }) => ({
      name,
      title: title ?? null,
      description: description ?? '',
      parameters: parameters ?? [],
      deprecated: Boolean(deprecated),
    }));
}

export async function readTagTypes(source) {
  const { tagTypes } = await source.get('/api/admin/tag-types');
  return tagTypes.map(({ name, description, icon, color }) => ({
    name,
    description: description ?? '',
    icon: icon ?? null,
    color: color ?? null,
  }));
}

const flagEntry = (feature, archived) => ({
  name: feature.name,
  archived,
  // The flag's own state per environment: 6.x's export reports the environment's instead.
  enabled: Object.fromEntries((feature.environments ?? []).map((environment) => [environment.name, Boolean(environment.enabled)])),
});

/**
 * Every flag of a project (name, archived, on/off per environment). Active flags in one
 * request (`/api/admin/projects/:p/features`, 6.x to 8.x); archived ones through feature
 * search, which 6.10.1 pages 50 at a time (too slow for thousands of active flags), narrowed
 * by the prefix when there is one.
 */
export async function readFlagNames(source, project, prefix) {
  const { features } = await source.get(`/api/admin/projects/${encodeURIComponent(project)}/features`);
  const names = features.map((feature) => flagEntry(feature, false));
  const narrowed = prefix ? `&query=${encodeURIComponent(prefix)}` : '';
  for (let offset = 0; ;) {
    const page = await source.get(
      `/api/admin/search/features?project=IS:${encodeURIComponent(project)}&archived=IS:true&limit=1000&offset=${offset}${narrowed}`,
    );
    for (const feature of page.features) names.push(flagEntry(feature, true));
    offset += page.features.length;
    if (page.features.length === 0 || offset >= page.total) break;
  }
  const seen = new Set();
  return names.filter(({ name }) => !seen.has(name) && seen.add(name));
}

/**
 * Unleash's own export of these flags in one environment: the import format. In slices of
 * 500 names, because Unleash refuses request bodies over 100 kB (413); the slices are merged.
 */
export async function exportFlags(endpointApi, names, environment) {
  const merged = {
    features: [],
    featureStrategies: [],
    featureEnvironments: [],
    contextFields: [],
    featureTags: [],
    segments: [],
    tagTypes: [],
    dependencies: [],
  };
  const seen = { contextFields: new Set(), segments: new Set(), tagTypes: new Set() };
  for (let from = 0; from < names.length; from += 500) {
    const part = await endpointApi.post('/api/admin/features-batch/export', { features: names.slice(from, from + 500), environment });
    for (const [key, rows] of Object.entries(part)) {
      if (!Array.isArray(rows)) continue;
      merged[key] ??= [];
      for (const row of rows) {
        if (seen[key]) {
          const identity = row.id ?? row.name;
          if (seen[key].has(identity)) continue;
          seen[key].add(identity);
        }
        merged[key].push(row);
      }
    }
  }
  return merged;
}

export async function readAddons(source) {
  const { addons } = await source.get('/api/admin/addons');
  return addons;
}

export async function readUsers(source) {
  const { users } = await source.get('/api/admin/user-admin');
  return users.filter((user) => !user.isAPI && user.accountType !== 'Service Account');
}

export async function readApiTokens(source) {
  const { tokens } = await source.get('/api/admin/api-tokens');
  return tokens;
}

/** Custom roles and project access: Enterprise only; null where the source does not offer them. */
export async function readCustomRoles(source) {
  const answer = await optional(source, '/api/admin/roles');
  if (!answer) return null;
  return (answer.roles ?? []).filter((role) => role.type === 'custom' || role.type === 'root-custom');
}

export async function readProjectAccess(source, project) {
  return optional(source, `/api/admin/projects/${encodeURIComponent(project)}/access`);
}

/** What the admin token may do: a non-admin token cannot read the users. */
export async function checkAdmin(source, label) {
  const answer = await source.send('GET', '/api/admin/user-admin', undefined, { allowed: [401, 403] });
  if (answer.status === 401)
    throw new Error(`${label}: the token was not accepted (401). Give an admin API token or an admin's personal access token.`);
  if (answer.status === 403) {
    throw new Error(
      `${label}: the token is not an admin's (403 on /api/admin/user-admin). Give an admin API token or an admin's personal access token.`,
    );
  }
}
