#!/usr/bin/env node
// Seeds a realistic Unleash (6.x to 8.x) to migrate from, every name under one prefix so a
// shared instance keeps other people's objects apart: context fields, segments, a custom
// strategy, a tag type, flags with every built-in strategy and every constraint operator,
// variants, dependencies, tags and archived flags, two integrations, users and tokens.
// Idempotent: what exists is left as is. Flags go in through Unleash's own import.
//   node scripts/migrate/seed.mjs --url http://127.0.0.1:4243 --token '*:*.unleash6-admin-token' [--prefix mig-] [--flags 200]
import { parseArgs } from 'node:util';
import { endpoint } from './http.mjs';

const OPERATORS = [
  ['IN', { values: ['eu', 'us'] }],
  ['NOT_IN', { values: ['apac'] }],
  ['STR_CONTAINS', { values: ['beta', 'Canary'], caseInsensitive: true }],
  ['STR_STARTS_WITH', { values: ['user-1'] }],
  ['STR_ENDS_WITH', { values: ['7', '3'] }],
  ['NUM_EQ', { value: '5' }],
  ['NUM_GT', { value: '10' }],
  ['NUM_GTE', { value: '10' }],
  ['NUM_LT', { value: '3' }],
  ['NUM_LTE', { value: '3' }],
  ['DATE_AFTER', { value: '2024-01-01T00:00:00.000Z' }],
  ['DATE_BEFORE', { value: '2099-01-01T00:00:00.000Z' }],
  ['SEMVER_EQ', { value: '1.2.3' }],
  ['SEMVER_GT', { value: '1.0.0' }],
  ['SEMVER_LT', { value: '2.0.0-beta.1' }],
];
const TYPES = ['release', 'experiment', 'operational', 'kill-switch', 'permission'];

/** The context a constraint with this operator is about. */
function constraintFor(index, prefix) {
  const [operator, shape] = OPERATORS[index % OPERATORS.length];
  const contextName = operator.startsWith('NUM')
    ? `${prefix}tier`
    : operator.startsWith('DATE')
      ? 'currentTime'
      : operator.startsWith('SEMVER')
        ? `${prefix}version`
        : operator === 'IN' || operator === 'NOT_IN'
          ? `${prefix}region`
          : 'userId';
  return { contextName, operator, inverted: index % 9 === 4, caseInsensitive: false, ...shape };
}

function strategyFor(i, slot, prefix, environment, segmentIds, available) {
  const wanted = (i + slot) % 6;
  // A source without a built-in (8.x dropped userWithId, remoteAddress, applicationHostname) gets the standard one.
  const kind = available.has(
    ['default', 'flexibleRollout', 'userWithId', 'remoteAddress', 'applicationHostname', `${prefix}custom`][wanted],
  )
    ? wanted
    : 0;
  const constraints =
    (i + slot) % 3 === 0 ? [] : [constraintFor(i + slot * 5, prefix), ...(i % 4 === 0 ? [constraintFor(i + 7, prefix)] : [])];
  const base = {
    constraints,
    segments: i % 10 === slot ? [segmentIds[i % segmentIds.length]] : [],
    title: i % 8 === 0 ? `title ${i}.${slot}` : null,
  };
  switch (kind) {
    case 0:
      return { ...base, name: 'default', parameters: {} };
    case 1:
      return {
        ...base,
        name: 'flexibleRollout',
        parameters: { rollout: String((i * 7) % 101), stickiness: i % 2 ? 'userId' : 'default', groupId: `${prefix}flag-${i}` },
        variants:
          i % 10 === 5
            ? // Three ways, given in reverse: Unleash gives the remainder to the first given (on-c
              // 334) and lists them by name (333/333/334), which a copy must keep.
              ['on-z', 'on-y', 'on-x'].map((name) => ({ name, weight: 0, weightType: 'variable', stickiness: 'default' }))
            : i % 5 === 0
              ? [
                  { name: 'on-a', weight: 500, weightType: 'variable', stickiness: 'default', payload: { type: 'string', value: `a${i}` } },
                  { name: 'on-b', weight: 500, weightType: 'variable', stickiness: 'default' },
                ]
              : [],
      };
    case 2:
      return { ...base, name: 'userWithId', parameters: { userIds: `user-${i},user-${i + 1},42` } };
    case 3:
      return { ...base, name: 'remoteAddress', parameters: { IPs: `10.0.${i % 255}.0/24,192.168.1.${i % 255}` } };
    case 4:
      return { ...base, name: 'applicationHostname', parameters: { hostNames: `host-${i},${environment}-host` } };
    default:
      return { ...base, name: `${prefix}custom`, parameters: { level: String(i % 4), tenants: `t${i}` } };
  }
}

function seedPayload({ prefix, count, project, environment, segments, available }) {
  const segmentIds = segments.map((segment) => segment.id);
  const features = [];
  const featureStrategies = [];
  const featureEnvironments = [];
  const featureTags = [];
  const dependencies = [];
  for (let i = 0; i < count; i++) {
    const name = `${prefix}flag-${i}`;
    features.push({
      name,
      description: i % 3 === 0 ? `Flag ${i} of the migration seed` : null,
      type: TYPES[i % TYPES.length],
      project,
      stale: i % 11 === 0,
      impressionData: i % 7 === 0,
    });
    const strategyCount = i % 4;
    for (let slot = 0; slot < strategyCount; slot++)
      featureStrategies.push({ featureName: name, sortOrder: slot, ...strategyFor(i, slot, prefix, environment, segmentIds, available) });
    featureEnvironments.push({
      name,
      featureName: name,
      environment,
      enabled: (i + environment.length) % 5 !== 0,
      variants:
        i % 6 === 1
          ? [
              {
                name: 'red',
                weight: 300,
                weightType: 'fix',
                stickiness: 'default',
                payload: { type: 'json', value: `{"n":${i}}` },
                overrides: [{ contextName: 'userId', values: [`user-${i}`] }],
              },
              { name: 'blue', weight: 700, weightType: 'variable', stickiness: 'default' },
            ]
          : [],
    });
    if (i % 4 === 1) featureTags.push({ featureName: name, tagType: `${prefix}team`, tagValue: `team-${i % 3}` });
    if (i % 9 === 2) featureTags.push({ featureName: name, tagType: 'simple', tagValue: `${prefix}tagged` });
    // The last tenth depend on the first: parents are imported in the same payload.
    if (i >= count - Math.floor(count / 10)) {
      const parent = `${prefix}flag-${i - (count - Math.floor(count / 10))}`;
      dependencies.push({ feature: name, dependencies: [{ feature: parent, enabled: i % 2 === 0, ...(i % 4 === 0 ? {} : {}) }] });
    }
  }
  return {
    project,
    environment,
    data: {
      features,
      featureStrategies,
      featureEnvironments,
      featureTags,
      contextFields: [],
      segments: segments.map(({ id, name }) => ({ id, name })),
      tagTypes: [{ name: `${prefix}team`, description: 'Owning team' }],
      dependencies,
    },
  };
}

/**
 * A personal access token of a user (Unleash's import refuses admin API tokens): sign in,
 * then create the token with the session. Names it with the prefix, so it can be found later.
 */
export async function personalToken(url, username, password, prefix = 'mig-') {
  const login = await fetch(`${url}/auth/simple/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username, password }),
  });
  // The whole body first: Unleash stores the session when the answer ends.
  const text = await login.text();
  if (login.status !== 200) throw new Error(`sign-in of ${username} answered ${login.status}: ${text}`);
  const cookie = login.headers
    .getSetCookie()
    .map((header) => header.split(';')[0])
    .join('; ');
  // Unleash allows 10 personal tokens per user: the ones an earlier seed made (our prefix) go first.
  const listed = await fetch(`${url}/api/admin/user/tokens`, { headers: { cookie } });
  if (listed.ok) {
    for (const pat of (await listed.json()).pats ?? []) {
      if (String(pat.description ?? '').startsWith(`${prefix}pat-`)) {
        await fetch(`${url}/api/admin/user/tokens/${pat.id}`, { method: 'DELETE', headers: { cookie } });
      }
    }
  }
  const expiresAt = new Date(Date.now() + 7 * 24 * 3600 * 1000).toISOString();
  const created = await fetch(`${url}/api/admin/user/tokens`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie },
    body: JSON.stringify({ description: `${prefix}pat-${Date.now()}`, expiresAt }),
  });
  const body = await created.json();
  if (created.status !== 201) throw new Error(`personal token of ${username} answered ${created.status}: ${JSON.stringify(body)}`);
  return body.secret;
}

async function ensure(api, getPath, listKey, name, createPath, body) {
  const list = await api.get(getPath);
  const items = listKey ? list[listKey] : list;
  const found = items.find((item) => [item.name, item.username, item.tokenName, item.description].includes(name));
  if (found) return found;
  return api.post(createPath, body);
}

export async function seed({
  url,
  token,
  importToken = token,
  prefix = 'mig-',
  flags = 200,
  log = console.log,
  withUsers = true,
  archive = true,
  batch = 200,
  environments: only,
}) {
  const api = endpoint(url, token, { name: 'seed' });
  const importer = endpoint(url, importToken, { name: 'seed import' });
  const { environments } = await api.get('/api/admin/environments');
  const enabled = environments.filter((environment) => environment.enabled).map((environment) => environment.name);
  const project = 'default';

  await ensure(api, '/api/admin/context', null, `${prefix}region`, '/api/admin/context', {
    name: `${prefix}region`,
    description: 'Where the user is',
    legalValues: [{ value: 'eu', description: 'Europe' }, { value: 'us' }, { value: 'apac' }],
    stickiness: false,
  });
  await ensure(api, '/api/admin/context', null, `${prefix}tier`, '/api/admin/context', {
    name: `${prefix}tier`,
    description: 'Plan tier (number)',
    stickiness: true,
  });
  await ensure(api, '/api/admin/context', null, `${prefix}version`, '/api/admin/context', {
    name: `${prefix}version`,
    description: 'App version (semver)',
  });
  for (const [name, constraints] of [
    [`${prefix}seg-beta`, [{ contextName: 'userId', operator: 'STR_STARTS_WITH', values: ['user-1'] }]],
    [`${prefix}seg-eu`, [{ contextName: `${prefix}region`, operator: 'IN', values: ['eu'] }]],
  ]) {
    await ensure(api, '/api/admin/segments', 'segments', name, '/api/admin/segments', {
      name,
      description: `segment ${name}`,
      constraints,
    });
  }
  const segments = (await api.get('/api/admin/segments')).segments.filter((segment) => segment.name.startsWith(prefix));
  await ensure(api, '/api/admin/strategies', 'strategies', `${prefix}custom`, '/api/admin/strategies', {
    name: `${prefix}custom`,
    description: 'A custom strategy of the seed',
    parameters: [
      { name: 'level', type: 'number', description: 'a level', required: true },
      { name: 'tenants', type: 'list', description: 'tenant ids', required: false },
    ],
  });
  await ensure(api, '/api/admin/tag-types', 'tagTypes', `${prefix}team`, '/api/admin/tag-types', {
    name: `${prefix}team`,
    description: 'Owning team',
  });

  const available = new Set(
    (await api.get('/api/admin/strategies')).strategies.filter((strategy) => !strategy.deprecated).map((strategy) => strategy.name),
  );
  // Imported every time (Unleash's import replaces a flag's strategies with the same ones), but
  // never over an archived flag, which the import refuses.
  const alreadyArchived = new Set(
    (
      await api.get(`/api/admin/search/features?project=IS:${project}&archived=IS:true&limit=100000&query=${encodeURIComponent(prefix)}`)
    ).features.map((feature) => feature.name),
  );
  for (const environment of enabled.filter((name) => name !== 'default' && (!only || only.includes(name)))) {
    const started = Date.now();
    const payload = seedPayload({ prefix, count: flags, project, environment, segments, available });
    if (alreadyArchived.size > 0) {
      const active = (row) => !alreadyArchived.has(row.name ?? row.featureName ?? row.feature);
      payload.data.features = payload.data.features.filter(active);
      payload.data.featureStrategies = payload.data.featureStrategies.filter((row) => !alreadyArchived.has(row.featureName));
      payload.data.featureEnvironments = payload.data.featureEnvironments.filter((row) => !alreadyArchived.has(row.featureName));
      payload.data.featureTags = payload.data.featureTags.filter((row) => !alreadyArchived.has(row.featureName));
      payload.data.dependencies = payload.data.dependencies.filter(active);
    }
    // In batches: a parent always comes in an earlier batch than its children.
    for (let from = 0; from < payload.data.features.length; from += batch) {
      const names = new Set(payload.data.features.slice(from, from + batch).map((feature) => feature.name));
      const part = (rows, key) => rows.filter((row) => names.has(row[key]));
      await importer.post('/api/admin/features-batch/import', {
        ...payload,
        data: {
          ...payload.data,
          features: part(payload.data.features, 'name'),
          featureStrategies: part(payload.data.featureStrategies, 'featureName'),
          featureEnvironments: part(payload.data.featureEnvironments, 'featureName'),
          featureTags: part(payload.data.featureTags, 'featureName'),
          dependencies: part(payload.data.dependencies, 'feature'),
        },
      });
    }
    log(`seed: ${payload.data.features.length} flags imported into ${project}/${environment} in ${Date.now() - started} ms`);
  }
  if (archive) {
    const archived = [];
    for (let i = Math.floor(flags * 0.8); i < Math.floor(flags * 0.8) + Math.max(1, Math.floor(flags / 40)); i++)
      archived.push(`${prefix}flag-${i}`);
    const toArchive = archived.filter((name) => !alreadyArchived.has(name));
    if (toArchive.length > 0) await api.post(`/api/admin/projects/${project}/archive`, { features: toArchive });
  }

  for (const [description, provider, parameters] of [
    [`${prefix}webhook`, 'webhook', { url: 'http://127.0.0.1:9/mig-webhook', contentType: 'application/json' }],
    [`${prefix}webhook-2`, 'webhook', { url: 'http://127.0.0.1:9/mig-webhook-2', bodyTemplate: '{"event":"{{event.type}}"}' }],
  ]) {
    // 8.2.0 resolves and checks the target host on creation: offline, or for a loopback
    // address, it refuses; the seed goes on without that integration.
    try {
      await ensure(api, '/api/admin/addons', 'addons', description, '/api/admin/addons', {
        provider,
        description,
        enabled: false,
        parameters,
        events: ['feature-created', 'feature-archived'],
        projects: [],
        environments: [],
      });
    } catch (error) {
      log(`seed: the source refused integration ${description}: ${String(error.message).slice(0, 160)}`);
    }
  }

  if (withUsers) {
    for (let i = 0; i < 10; i++) {
      const username = `${prefix}user-${i}`;
      await ensure(api, '/api/admin/user-admin', 'users', username, '/api/admin/user-admin', {
        username,
        email: `${prefix}user-${i}@example.com`,
        name: `Migrated Person ${i}`,
        rootRole: [1, 2, 3][i % 3],
        sendEmail: false,
      });
    }
  }

  // Tokens as users have them: one project, and Unleash's default, all projects (`*:<env>.…`).
  const tokens = [];
  const wanted = [];
  for (const environment of enabled.filter((name) => name !== 'default')) {
    for (const type of ['client', 'frontend'])
      wanted.push({ tokenName: `${prefix}${type}-${environment}`, type, environment, projects: [project] });
  }
  const first = enabled.find((name) => name !== 'default');
  for (const type of ['client', 'frontend'])
    wanted.push({ tokenName: `${prefix}all-${type}-${first}`, type, environment: first, projects: ['*'] });
  for (const body of wanted) {
    const list = (await api.get('/api/admin/api-tokens')).tokens;
    const found = list.find((listed) => listed.tokenName === body.tokenName);
    tokens.push(found ?? (await api.post('/api/admin/api-tokens', body)));
  }
  // No admin token: 6.10.1 and 8.2.0 refuse to create new ones ("Admin tokens are disabled").
  return { tokens, environments: enabled, segments };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: {
      url: { type: 'string' },
      token: { type: 'string' },
      user: { type: 'string', default: 'admin' },
      password: { type: 'string', default: 'unleash4all' },
      prefix: { type: 'string', default: 'mig-' },
      flags: { type: 'string', default: '200' },
    },
  });
  const importToken = await personalToken(values.url, values.user, values.password, values.prefix);
  await seed({ url: values.url, token: values.token, importToken, prefix: values.prefix, flags: Number(values.flags) });
}
