#!/usr/bin/env node
// Differential parity sweep of read operations: seeds the same objects on the real Unleash
// (the oracle) and on this Worker through their admin APIs, then calls every GET operation of
// the oracle's `/docs/openapi.json` on both and compares status and answer shape (key sets,
// key order, value types, the shape of array elements). Values are not compared: ids,
// timestamps, secrets and counts differ naturally. See docs/parity.md.
//
//   node scripts/parity-sweep.mjs [--v8] [--only <regex>] [--keep] [--json] [--session] [--no-unknown]
//                                 [--oracle <url>] [--oracle-token <key>] [--ours <url>] [--ours-token <key>]
//   node scripts/parity-sweep.mjs [--v8] --clean <prefix>   (remove what a --keep run left)
//
// --v8: the oracle is Unleash 8.2.0 (http://127.0.0.1:4242, *:*.unleash-insecure-admin-api-token)
// instead of 6.10.1; it also seeds what 8.x added (a flag link, a project context field, an
// unknown flag) and sweeps the flag-link paths, which 6.10.1 crashes on (docs/parity.md).
// Environment: ORACLE_URL (http://127.0.0.1:4243), ORACLE_TOKEN (*:*.unleash6-admin-token),
// OURS_URL (http://127.0.0.1:8787), OURS_TOKEN (*:*.local-dev-admin-token); the options win.
// Only POST/PUT/DELETE of the objects it creates are sent (all under a unique name prefix);
// they are removed again at the end unless --keep is given.

import { known } from './parity/known.mjs';
import { compare } from './parity/shape.mjs';

const args = process.argv.slice(2);
const opt = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const ONLY = opt('--only') ? new RegExp(opt('--only')) : null;
const KEEP = args.includes('--keep');
const JSON_OUT = args.includes('--json');
// --session: the admin reads are made as the signed-in person `admin` (ADMIN_USER,
// ADMIN_PASSWORD; Unleash's admin/unleash4all on both), not with the admin API key, so
// person-only answers (favourites, personal dashboard, profile) are compared too.
const SESSION = args.includes('--session');
// --v8: Unleash 8.2.0 is the oracle (its own defaults, seeds and known differences).
const V8 = args.includes('--v8');

const servers = {
  oracle: {
    name: 'oracle',
    url: opt('--oracle') ?? process.env.ORACLE_URL ?? (V8 ? 'http://127.0.0.1:4242' : 'http://127.0.0.1:4243'),
    token: opt('--oracle-token') ?? process.env.ORACLE_TOKEN ?? (V8 ? '*:*.unleash-insecure-admin-api-token' : '*:*.unleash6-admin-token'),
  },
  ours: {
    name: 'ours',
    url: opt('--ours') ?? process.env.OURS_URL ?? 'http://127.0.0.1:8787',
    token: opt('--ours-token') ?? process.env.OURS_TOKEN ?? '*:*.local-dev-admin-token',
  },
};

const PREFIX = `${process.env.SWEEP_PREFIX ?? 'parity'}${V8 ? '8' : ''}-${Date.now().toString(36)}`;
const ENV = 'development';
const PROJECT = 'default'; // open-source Unleash cannot create projects

// Never sent to 6.10.1 by this script, whatever the document lists: its flag-link writes
// crash it. 8.2.0 has them in the open-source build.
const FORBIDDEN = V8 ? null : /\/link(\/|$)|\/links(\/|$)/;

async function call(server, method, path, body, headers = {}) {
  const init = {
    method,
    headers: { ...(server.cookie ? { cookie: server.cookie } : { authorization: server.token }), ...headers },
    redirect: 'manual',
  };
  if (body !== undefined) {
    init.headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  if (FORBIDDEN?.test(path)) throw new Error(`refusing to call ${path}`);
  const res = await fetch(server.url + path, init);
  const text = await res.text();
  let json;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, text, json, type: res.headers.get('content-type') ?? '' };
}

async function must(server, method, path, body, headers) {
  const r = await call(server, method, path, body, headers);
  if (r.status >= 300) {
    throw new Error(`${server.name}: ${method} ${path} -> ${r.status} ${r.text.slice(0, 300)}`);
  }
  return r;
}

// ---------------------------------------------------------------------------------------------
// Seeding: the same objects on both servers; returns what path parameters are filled from.

async function seed(server, s) {
  const p = `/api/admin/projects/${PROJECT}`;
  s.contextField = `${PREFIX}-ctx`;
  await must(server, 'POST', '/api/admin/context', {
    name: s.contextField,
    description: 'parity sweep',
    legalValues: [{ value: 'a', description: 'A' }, { value: 'b' }],
    stickiness: true,
  });
  s.tagType = `${PREFIX}-tt`;
  await must(server, 'POST', '/api/admin/tag-types', {
    name: s.tagType,
    description: 'parity sweep',
    icon: '',
  });
  s.tagValue = 'seeded';
  await must(server, 'POST', '/api/admin/tags', { type: s.tagType, value: s.tagValue });
  s.strategyName = `${PREFIX}-strat`;
  await must(server, 'POST', '/api/admin/strategies', {
    name: s.strategyName,
    description: 'parity sweep',
    parameters: [{ name: 'p', type: 'string', description: 'a parameter', required: false }],
  });
  const seg = await must(server, 'POST', '/api/admin/segments', {
    name: `${PREFIX}-seg`,
    description: 'parity sweep',
    constraints: [{ contextName: s.contextField, operator: 'IN', values: ['a'], caseInsensitive: false, inverted: false }],
  });
  s.segmentId = seg.json.id;

  s.parent = `${PREFIX}-parent`;
  s.feature = `${PREFIX}-flag`;
  s.archived = `${PREFIX}-arch`;
  for (const name of [s.parent, s.feature, s.archived]) {
    await must(server, 'POST', `${p}/features`, {
      name,
      type: 'release',
      description: 'parity sweep',
      impressionData: false,
    });
  }
  const strat = await must(server, 'POST', `${p}/features/${s.feature}/environments/${ENV}/strategies`, {
    name: 'flexibleRollout',
    title: 'seeded',
    disabled: false,
    parameters: { rollout: '50', stickiness: 'default', groupId: s.feature },
    constraints: [
      { contextName: 'userId', operator: 'IN', values: ['1', '2'], caseInsensitive: false, inverted: false },
      { contextName: 'currentTime', operator: 'DATE_AFTER', value: '2020-01-01T00:00:00.000Z' },
    ],
    segments: [s.segmentId],
    variants: [{ name: 'sv', weight: 1000, weightType: 'variable', stickiness: 'default', payload: { type: 'string', value: 'x' } }],
  });
  s.strategyId = strat.json.id;
  await must(server, 'POST', `${p}/features/${s.parent}/environments/${ENV}/strategies`, {
    name: 'default',
    parameters: {},
  });
  // 6.10.1 refuses environment variants (deprecated); seeded where allowed.
  await call(server, 'PUT', `${p}/features/${s.parent}/environments/${ENV}/variants`, [
    { name: 'v1', weight: 1000, weightType: 'variable', stickiness: 'default', payload: { type: 'json', value: '{"a":1}' } },
  ]);
  await must(server, 'POST', `/api/admin/features/${s.feature}/tags`, { type: s.tagType, value: s.tagValue });
  await must(server, 'POST', `${p}/features/${s.feature}/dependencies`, { feature: s.parent, enabled: true });
  await must(server, 'POST', `${p}/features/${s.feature}/environments/${ENV}/on`);
  await must(server, 'POST', `${p}/features/${s.parent}/environments/${ENV}/on`);
  await must(server, 'DELETE', `${p}/features/${s.archived}`);

  const tok = await must(server, 'POST', '/api/admin/api-tokens', {
    tokenName: `${PREFIX}-tok`,
    type: 'client',
    environment: ENV,
    projects: [PROJECT],
  });
  s.tokenName = `${PREFIX}-tok`;
  s.clientKey = tok.json.secret;

  const user = await must(server, 'POST', '/api/admin/user-admin', {
    email: `${PREFIX}@example.com`,
    name: 'Parity Sweep',
    rootRole: 3,
    sendEmail: false,
  });
  s.userId = user.json.id;

  const addon = await must(server, 'POST', '/api/admin/addons', {
    provider: 'webhook',
    description: `${PREFIX} webhook`,
    enabled: false,
    // 8.2.0 refuses webhook URLs on private networks and resolves names (a literal public
    // address then; the addon is disabled, so nothing is ever sent).
    parameters: { url: V8 ? 'http://93.184.215.14/parity' : 'http://127.0.0.1:9/parity' },
    events: ['feature-created'],
    projects: [],
    environments: [],
  });
  s.addonId = addon.json.id;

  s.appName = `${PREFIX}-app`;
  const client = { ...server, token: s.clientKey };
  await must(client, 'POST', '/api/client/register', {
    appName: s.appName,
    instanceId: `${PREFIX}-instance`,
    sdkVersion: 'unleash-client-node:5.5.0',
    strategies: ['default', 'flexibleRollout'],
    started: new Date().toISOString(),
    interval: 10000,
  });
  const now = new Date();
  await must(client, 'POST', '/api/client/metrics', {
    appName: s.appName,
    instanceId: `${PREFIX}-instance`,
    bucket: {
      start: new Date(now.getTime() - 60_000).toISOString(),
      stop: now.toISOString(),
      toggles: { [s.feature]: { yes: 3, no: 1, variants: { v1: 3 } } },
    },
  });

  if (V8) await seedV8(server, s, client, now);

  // The invite link: there is at most one; reuse the one present, else create one. One a sweep
  // made and expired at its end is made live again (and expired again at this one's end). The
  // link made on the second server takes the first one's name, so the lists compare.
  const links = await must(server, 'GET', '/api/admin/invite-link/tokens');
  const present = (links.json?.tokens ?? [])[0];
  if (present && new Date(present.expiresAt).getTime() > Date.now()) {
    s.inviteToken = present.secret;
  } else if (present && /^parity8?-/.test(present.name)) {
    await must(server, 'PUT', `/api/admin/invite-link/tokens/${present.secret}`, {
      expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
    });
    s.inviteToken = present.secret;
    s.createdInvite = true;
  } else if (!present) {
    const made = await must(server, 'POST', '/api/admin/invite-link/tokens', {
      name: inviteName ?? `${PREFIX}-invite`,
      expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
    });
    s.inviteToken = made.json.secret;
    s.createdInvite = true;
  }
  // else: another's expired link; {token} stays unfilled (the operations are skipped).
  inviteName ??= present?.name;
}

/** The invite link's name on the first server seeded. */
let inviteName;

// What 7.x/8.x added to the open-source build: a flag link, a project context field and a
// name the SDK counted that is no flag (an unknown flag).
async function seedV8(server, s, client, now) {
  const p = `/api/admin/projects/${PROJECT}`;
  await must(server, 'POST', `${p}/features/${s.feature}/link`, { url: 'https://example.com/parity', title: 'parity' });
  s.projectContextField = `${PREFIX}-pctx`;
  await must(server, 'POST', `${p}/context`, {
    name: s.projectContextField,
    description: 'parity sweep',
    legalValues: [{ value: 'x' }],
    stickiness: false,
  });
  await must(client, 'POST', '/api/client/metrics', {
    appName: s.appName,
    instanceId: `${PREFIX}-instance`,
    environment: ENV,
    bucket: {
      start: new Date(now.getTime() - 60_000).toISOString(),
      stop: now.toISOString(),
      toggles: { [`${PREFIX}-no-such-flag`]: { yes: 1, no: 0, variants: {} } },
    },
  });
}

async function cleanup(server, s) {
  const p = `/api/admin/projects/${PROJECT}`;
  const tries = [
    ['DELETE', `${p}/features/${s.feature}/dependencies`],
    ['DELETE', `${p}/features/${s.feature}`],
    ['DELETE', `${p}/features/${s.parent}`],
    ['DELETE', `${p}/features/${s.archived}`],
    ['DELETE', `/api/admin/archive/${s.feature}`],
    ['DELETE', `/api/admin/archive/${s.parent}`],
    ['DELETE', `/api/admin/archive/${s.archived}`],
    ['DELETE', `/api/admin/segments/${s.segmentId}`],
    ['DELETE', `/api/admin/tags/${s.tagType}/${s.tagValue}`],
    ['DELETE', `/api/admin/tag-types/${s.tagType}`],
    ['DELETE', `/api/admin/context/${s.contextField}`],
    ['DELETE', `${p}/context/${s.projectContextField}`],
    ['DELETE', `/api/admin/strategies/${s.strategyName}`],
    ['DELETE', `/api/admin/addons/${s.addonId}`],
    ['DELETE', `/api/admin/user-admin/${s.userId}`],
    ['DELETE', `/api/admin/metrics/applications/${s.appName}`],
  ];
  if (s.clientKey) tries.push(['DELETE', `/api/admin/api-tokens/${encodeURIComponent(s.clientKey)}`]);
  if (s.createdInvite) {
    tries.push(['PUT', `/api/admin/invite-link/tokens/${s.inviteToken}`, { expiresAt: new Date().toISOString() }]);
  }
  const failed = [];
  // Unleash creates an application from reported metrics on a timer, so it may come back
  // after its deletion: delete it once more a little later.
  if (s.appName) {
    setTimeout(() => call(server, 'DELETE', `/api/admin/metrics/applications/${s.appName}`).catch(() => {}), 12_000);
  }
  let archived = false;
  for (const [m, path, body] of tries) {
    if (path.includes('undefined')) continue;
    // 8.2.0 records the archived stage of a flag's lifecycle after answering; deleting the
    // flag from the archive before that lands fails its insert (a foreign key) in the
    // background, which is how a shared oracle went down once.
    if (!archived && path.startsWith('/api/admin/archive/')) {
      archived = true;
      await new Promise((resolve) => setTimeout(resolve, 2000));
    }
    const r = await call(server, m, path, body).catch((e) => ({ status: String(e) }));
    // 404: already gone (or never made, when seeding stopped early).
    if (!(typeof r.status === 'number' && (r.status < 300 || r.status === 404))) failed.push(`${m} ${path} -> ${r.status}`);
  }
  return failed;
}

// ---------------------------------------------------------------------------------------------
// Filling an operation's path and query.

const SKIP = {
  '/api/admin/user/tokens':
    'personal access tokens belong to people; both answer an admin API key with a refusal (compared anyway as status only)',
};

function fill(path, s, unknown = null) {
  const byPath = [
    [/^\/api\/admin\/strategies\/\{name\}$/, { name: s.strategyName }],
    [/^\/api\/admin\/tag-types\/\{name\}$/, { name: s.tagType }],
    [/^\/api\/admin\/environments\/\{name\}$/, { name: ENV }],
    [/^\/api\/admin\/api-tokens\/\{name\}$/, { name: s.tokenName }],
    [/^\/api\/admin\/client-metrics\/features\/\{name\}/, { name: s.feature }],
    [/^\/api\/admin\/addons\/\{id\}/, { id: s.addonId }],
    [/^\/api\/admin\/user-admin\/\{id\}/, { id: s.userId }],
    [/^\/api\/admin\/segments\/\{id\}/, { id: s.segmentId }],
    [/^\/api\/admin\/events\/\{featureName\}/, { featureName: s.feature }],
    [/^\/api\/admin\/tags\/\{type\}/, { type: s.tagType, value: s.tagValue }],
  ];
  let params = {
    token: s.inviteToken,
    featureName: s.feature,
    child: s.feature,
    parent: s.parent,
    projectId: PROJECT,
    environment: ENV,
    appName: s.appName,
    contextField: s.contextField,
    strategyId: s.strategyId,
  };
  for (const [re, extra] of byPath) if (re.test(path)) params = { ...params, ...extra };
  if (unknown) {
    // A number where the seeded value is one (ids), else a name nobody made.
    params[unknown] = /^\d+$/.test(String(params[unknown])) ? 987654 : `${PREFIX}-unknown`;
  }
  let missing = null;
  const filled = path.replace(/\{(\w+)\}/g, (_, k) => {
    if (params[k] === undefined) missing = k;
    return encodeURIComponent(String(params[k]));
  });
  return { filled: filled + (QUERY[path] ? `?${QUERY[path](s)}` : ''), missing };
}

const QUERY = {
  '/auth/reset/validate': () => 'token=not-a-real-reset-token',
  '/api/admin/events': () => `project=${PROJECT}`,
  '/api/admin/user/roles': () => `projectId=${PROJECT}`,
  '/api/admin/search/features': () => `project=IS:${PROJECT}&query=${PREFIX}`,
  '/api/admin/search/events': () => `query=${PREFIX}&limit=5`,
  '/api/admin/user-admin/search': () => `q=${PREFIX}`,
  '/api/client/features': () => `namePrefix=${PREFIX}`,
  '/api/admin/archive/features': () => '',
};

async function signIn(server) {
  const res = await fetch(`${server.url}/auth/simple/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      username: process.env.ADMIN_USER ?? 'admin',
      password: process.env.ADMIN_PASSWORD ?? 'unleash4all',
    }),
    redirect: 'manual',
  });
  await res.text();
  const cookies = res.headers.getSetCookie().map((c) => c.split(';')[0]);
  if (res.status !== 200 || cookies.length === 0) throw new Error(`${server.name}: sign-in answered ${res.status}`);
  return cookies.join('; ');
}

// Per-operation request key: the client and frontend APIs are called with a key of their kind.
function keyFor(path, s, server) {
  if (path.startsWith('/api/client/')) return s.clientKey;
  if (path.startsWith('/api/frontend')) return s.frontendKey;
  return server.token;
}

// ---------------------------------------------------------------------------------------------

async function cleanAll(seeded) {
  for (const server of Object.values(servers)) {
    const s = seeded[server.name];
    const failed = await cleanup(server, s);
    if (s.frontendKey) {
      const fe = await call(server, 'DELETE', `/api/admin/api-tokens/${encodeURIComponent(s.frontendKey)}`);
      if (fe.status >= 300) failed.push(`frontend token -> ${fe.status}`);
    }
    if (failed.length) console.error(`${server.name}: cleanup left: ${failed.join('; ')}`);
  }
}

/**
 * `--clean <prefix>`: finds what an earlier run with that prefix left (after --keep, or a
 * crash) on both servers and removes it.
 */
async function cleanPrefix(prefix) {
  for (const server of Object.values(servers)) {
    const get = async (path) => (await call(server, 'GET', path)).json;
    const s = {
      feature: `${prefix}-flag`,
      parent: `${prefix}-parent`,
      archived: `${prefix}-arch`,
      tagType: `${prefix}-tt`,
      tagValue: 'seeded',
      contextField: `${prefix}-ctx`,
      projectContextField: V8 ? `${prefix}-pctx` : undefined,
      strategyName: `${prefix}-strat`,
      appName: `${prefix}-app`,
    };
    s.segmentId = (await get('/api/admin/segments'))?.segments?.find((x) => x.name === `${prefix}-seg`)?.id;
    s.addonId = (await get('/api/admin/addons'))?.addons?.find((x) => x.description === `${prefix} webhook`)?.id;
    s.userId = (await get('/api/admin/user-admin'))?.users?.find((x) => x.email === `${prefix}@example.com`)?.id;
    const tokens = ((await get('/api/admin/api-tokens'))?.tokens ?? []).filter((x) => x.tokenName.startsWith(prefix));
    const failed = await cleanup(server, s);
    for (const token of tokens) {
      const handle = token.id ?? token.secret;
      const r = await call(server, 'DELETE', `/api/admin/api-tokens/${encodeURIComponent(handle)}`);
      if (r.status >= 300) failed.push(`token ${token.tokenName} -> ${r.status}`);
    }
    console.log(`${server.name}: cleaned ${prefix}${failed.length ? `; left: ${failed.join('; ')}` : ''}`);
  }
}

async function main() {
  if (opt('--clean')) return cleanPrefix(opt('--clean'));
  const doc = await (await fetch(`${servers.oracle.url}/docs/openapi.json`)).json();
  const ops = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    if (item.get) ops.push({ path, op: item.get });
  }
  const cookies = {};
  if (SESSION) for (const server of Object.values(servers)) cookies[server.name] = await signIn(server);
  const seeded = { oracle: {}, ours: {} };
  try {
    for (const server of Object.values(servers)) {
      await seed(server, seeded[server.name]);
      // A frontend key for the frontend API.
      const fe = await must(server, 'POST', '/api/admin/api-tokens', {
        tokenName: `${PREFIX}-fe`,
        type: 'frontend',
        environment: ENV,
        projects: [PROJECT],
      });
      seeded[server.name].frontendKey = fe.json.secret;
    }
  } catch (e) {
    if (!KEEP) await cleanAll(seeded);
    throw e;
  }
  // Let both servers take in what was registered and reported.
  await new Promise((r) => setTimeout(r, Number(process.env.SETTLE_MS ?? 15000)));
  // 8.2.0 writes the unknown flags it saw every 2 minutes: wait for the seeded one.
  if (V8) {
    const until = Date.now() + 150_000;
    const seen = async () =>
      (await call(servers.oracle, 'GET', '/api/admin/metrics/unknown-flags')).json?.unknownFlags?.some((flag) =>
        flag.name.startsWith(PREFIX),
      );
    while (Date.now() < until && !(await seen())) await new Promise((r) => setTimeout(r, 5000));
  }

  const report = { compared: 0, same: [], differ: [], skipped: [], oursMissing: [] };
  // Each operation as seeded, then (unless --no-unknown) with its last path parameter naming
  // nothing, to compare the refusals too (status, error shape and message).
  const runs = [];
  for (const { path } of ops) {
    runs.push({ path, unknown: null });
    const params = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
    if (params.length && !args.includes('--no-unknown')) runs.push({ path, unknown: params.at(-1) });
  }
  for (const { path, unknown } of runs) {
    if (ONLY && !ONLY.test(path)) continue;
    const label = unknown ? `${path}  [unknown {${unknown}}]` : path;
    if (FORBIDDEN?.test(path)) {
      report.skipped.push({ path: label, why: 'links are never called' });
      continue;
    }
    const answers = {};
    let skip = null;
    for (const server of Object.values(servers)) {
      const s = seeded[server.name];
      const { filled, missing } = fill(path, s, unknown);
      if (missing) {
        skip = `no seeded value for {${missing}}`;
        break;
      }
      const key = keyFor(path, s, server);
      const asPerson = SESSION && key === server.token ? { cookie: cookies[server.name] } : {};
      const r = await call({ ...server, token: key, ...asPerson }, 'GET', filled);
      answers[server.name] = { ...r, filled };
    }
    if (skip) {
      report.skipped.push({ path: label, why: skip });
      continue;
    }
    report.compared++;
    const o = answers.oracle;
    const u = answers.ours;
    const diffs = [];
    if (o.status !== u.status) diffs.push(`status oracle=${o.status} ours=${u.status}`);
    if (!unknown && o.status < 400 && u.status === 404) report.oursMissing.push(path);
    const oj = o.type.includes('json');
    const uj = u.type.includes('json');
    if (oj !== uj) diffs.push(`content-type oracle=${o.type} ours=${u.type}`);
    if (oj && uj && o.json !== undefined && u.json !== undefined) {
      compare(o.json, u.json, '', diffs, PREFIX);
      const om = o.json?.message;
      const um = u.json?.message;
      if (o.status >= 400 && typeof om === 'string' && typeof um === 'string' && om !== um) {
        diffs.push(`message oracle=${JSON.stringify(om.slice(0, 160))} ours=${JSON.stringify(um.slice(0, 160))}`);
      }
    } else if (!oj && !uj && o.text.split('\n')[0] !== u.text.split('\n')[0]) {
      diffs.push(
        `first line oracle=${JSON.stringify(o.text.split('\n')[0].slice(0, 200))} ours=${JSON.stringify(u.text.split('\n')[0].slice(0, 200))}`,
      );
    }
    if (SKIP[path] && !unknown) diffs.push(`note: ${SKIP[path]}`);
    (diffs.length ? report.differ : report.same).push({ path: label, url: o.filled, diffs });
  }
  if (!KEEP) await cleanAll(seeded);

  if (JSON_OUT) {
    console.log(JSON.stringify(report, null, 2));
    return;
  }
  const unexplained = report.differ.filter((d) => d.diffs.some((line) => !known(d.path, line, V8)));
  console.log(
    `prefix ${PREFIX}: ${ops.length} GET operations, ${report.compared} compared, ${report.same.length} same shape, ${report.differ.length} differ (${unexplained.length} with unexplained differences, marked -; known ones are marked ·), ${report.skipped.length} skipped`,
  );
  for (const d of report.differ) {
    console.log(`\nGET ${d.path}\n  (${d.url})`);
    for (const line of d.diffs) {
      const why = known(d.path, line, V8);
      console.log(`  ${why ? '·' : '-'} ${line}${why ? `  [known: ${why}]` : ''}`);
    }
  }
  if (report.skipped.length) {
    console.log('\nSkipped:');
    for (const s of report.skipped) console.log(`  ${s.path}: ${s.why}`);
  }
  if (report.oursMissing.length) {
    console.log('\nThe oracle answers, we 404:');
    for (const p of report.oursMissing) console.log(`  ${p}`);
  }
  console.log('\nSame shape:');
  for (const d of report.same) console.log(`  ${d.path}`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
