// The SDK benches' data set (bench/sdk/run.mjs, bench/edge/cpu.mjs): 350 flags (about 200
// strategies, some constraints and strategy variants) plus 5 small ones, imported through the
// same admin API into our Worker and into a real Unleash, and the keys to read them with.
export const PROJECT = 'default';
export const ENVIRONMENT = 'production';
export const SMALL_ENVIRONMENT = 'development';
export const LARGE_COUNT = 350;
/** What the bench names its flags and tokens after (SDK_BENCH_PREFIX): on the shared Unleash, each helper its own. */
export const NAME = process.env.SDK_BENCH_PREFIX ?? 'sdkbench';
export const PREFIX = `${NAME}.`;

export function dataset() {
  const features = [];
  const featureStrategies = [];
  const featureEnvironments = [];
  for (let i = 0; i < LARGE_COUNT; i++) {
    const name = `${PREFIX}large.${String(i).padStart(4, '0')}`;
    features.push({
      name,
      description: i % 2 === 0 ? `Benchmark flag ${i}` : null,
      type: i % 5 === 0 ? 'experiment' : 'release',
      project: PROJECT,
    });
    // About 200 strategies over 350 flags, as in Edge's demo-instance data set.
    if (i % 7 < 4) {
      featureStrategies.push({
        name: 'flexibleRollout',
        featureName: name,
        parameters: { rollout: String((i * 13) % 101), stickiness: 'default', groupId: name },
        constraints:
          i % 6 === 0
            ? [{ contextName: 'region', operator: 'IN', values: ['eu', 'us', 'apac'], caseInsensitive: false, inverted: false }]
            : [],
        variants:
          i % 8 === 0
            ? [
                { name: 'a', weight: 500, weightType: 'variable', stickiness: 'default' },
                { name: 'b', weight: 500, weightType: 'variable', stickiness: 'default', payload: { type: 'json', value: '{"b":true}' } },
              ]
            : [],
      });
    }
    featureEnvironments.push({ name, featureName: name, environment: ENVIRONMENT, enabled: i % 6 !== 0 });
  }
  for (let i = 0; i < 5; i++) {
    const name = `${PREFIX}small.${i}`;
    features.push({ name, description: 'small', type: 'release', project: PROJECT });
    featureStrategies.push({
      name: 'flexibleRollout',
      featureName: name,
      parameters: { rollout: '50', stickiness: 'default', groupId: name },
    });
    featureEnvironments.push({ name, featureName: name, environment: ENVIRONMENT, enabled: true });
  }
  return { features, featureStrategies, featureEnvironments, tagTypes: [] };
}

/**
 * The 5 small flags alone, for environment `development`: there the 350 large flags are
 * disabled, so a frontend key of that environment gets a 5-flag answer.
 */
export function smallDataset() {
  const all = dataset();
  const small = (name) => name.startsWith(`${PREFIX}small.`);
  return {
    features: all.features.filter((f) => small(f.name)),
    featureStrategies: all.featureStrategies.filter((s) => small(s.featureName)),
    featureEnvironments: all.featureEnvironments.filter((e) => small(e.featureName)).map((e) => ({ ...e, environment: SMALL_ENVIRONMENT })),
    tagTypes: [],
  };
}

export async function must(response, ...statuses) {
  if (!statuses.includes(response.status)) throw new Error(`${response.url}: ${response.status} ${await response.text()}`);
  return response;
}

export function adminClient(base, token) {
  return (method, urlPath, body) =>
    fetch(`${base}${urlPath}`, {
      method,
      headers: { authorization: token, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
}

export async function seed(admin, tokenPrefix, importer = admin) {
  await must(
    await importer('POST', '/api/admin/features-batch/import', { project: PROJECT, environment: ENVIRONMENT, data: dataset() }),
    200,
  );
  await must(
    await importer('POST', '/api/admin/features-batch/import', { project: PROJECT, environment: SMALL_ENVIRONMENT, data: smallDataset() }),
    200,
  );
  const token = async (suffix, type, environment = ENVIRONMENT) => {
    const response = await must(
      await admin('POST', '/api/admin/api-tokens', {
        tokenName: `${tokenPrefix}-${suffix}`,
        type,
        environment,
        projects: [PROJECT],
      }),
      201,
    );
    return (await response.json()).secret;
  };
  return {
    client: await token('client', 'client'),
    frontend: await token('frontend', 'frontend'),
    frontendSmall: await token('frontend-small', 'frontend', SMALL_ENVIRONMENT),
  };
}

/** Removes what an earlier run left in the shared Unleash: bench flags (archived too) and tokens named `<tokenPrefix>-…`. */
export async function cleanUnleash(admin, tokenPrefix = NAME) {
  // Unleash's search answers at most 50 flags a page, whatever `limit` says: archive page by page.
  for (let page = 0; page < 100; page++) {
    const search = await (await must(await admin('GET', `/api/admin/search/features?query=${PREFIX}&limit=1000`), 200)).json();
    const active = search.features.map((f) => f.name).filter((name) => name.startsWith(PREFIX));
    if (active.length === 0) break;
    await must(await admin('POST', `/api/admin/projects/${PROJECT}/archive`, { features: active }), 202, 200);
  }
  for (let page = 0; page < 100; page++) {
    // 6.10.1 lists a project's archive; 7.x and later dropped that path for the search's filter.
    let listed = await admin('GET', `/api/admin/archive/features/${PROJECT}`);
    if (listed.status === 404) listed = await admin('GET', `/api/admin/search/features?query=${PREFIX}&archived=IS:true&limit=1000`);
    const archived = (await (await must(listed, 200)).json()).features.map((f) => f.name).filter((name) => name.startsWith(PREFIX));
    if (archived.length === 0) break;
    await must(await admin('POST', `/api/admin/projects/${PROJECT}/delete`, { features: archived }), 200);
  }
  const tokens = (await (await must(await admin('GET', '/api/admin/api-tokens'), 200)).json()).tokens;
  for (const t of tokens.filter((t) => t.tokenName?.startsWith(`${tokenPrefix}-`))) {
    await must(await admin('DELETE', `/api/admin/api-tokens/${encodeURIComponent(t.secret)}`), 200);
  }
}

/** Unleash refuses imports from admin tokens; a UI session may import (one login per run). */
export async function unleashSessionClient(base, user = 'admin', password = 'unleash4all') {
  // A fresh session is now and then not yet known to Unleash when the next request comes (a
  // 401 seen on this shared instance): check it, and sign in again if need be.
  for (let attempt = 1; ; attempt++) {
    const login = await must(
      await fetch(`${base}/auth/simple/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: user, password: password }),
      }),
      200,
    );
    const cookie = login.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    const client = (method, urlPath, body) =>
      fetch(`${base}${urlPath}`, {
        method,
        headers: { cookie, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
    const check = await client('GET', '/api/admin/user');
    await check.arrayBuffer();
    if (check.status === 200) return client;
    if (attempt === 3) throw new Error(`Unleash session for ${user}: GET /api/admin/user answered ${check.status} after sign-in`);
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

// The SDK bench's requests (bench/sdk/run.mjs, and Edge's in bench/edge/cpu.mjs).
export const CLIENT_SPEC_HEADERS = { 'unleash-client-spec': '5.2.0' };
// As unleash-proxy-client sends its context (it keeps one sessionId per browser).
export const FRONTEND_QUERY = 'appName=bench&environment=default&userId=123&sessionId=417392&properties%5Bregion%5D=eu';
// What each scenario asks; the floor answers the same paths with ours' bytes.
export const SCENARIOS = [
  {
    id: 'client-small',
    label: 'client/features ~2 kB',
    path: `/api/client/features?namePrefix=${PREFIX}small.`,
    key: 'client',
    headers: CLIENT_SPEC_HEADERS,
  },
  {
    id: 'client-large',
    label: 'client/features ~100 kB',
    path: `/api/client/features?namePrefix=${PREFIX}large.`,
    key: 'client',
    headers: CLIENT_SPEC_HEADERS,
  },
  { id: 'frontend', label: `frontend, ${LARGE_COUNT} flags`, path: `/api/frontend?${FRONTEND_QUERY}`, key: 'frontend', headers: {} },
];
// Every request another browser (wrk puts a counter where the path says `{n}`): what a busy
// site's browsers bring, a context never seen before. `floor` names the floor's body.
export const DISTINCT_ROWS = [
  {
    id: 'frontend-distinct',
    label: `frontend, ${LARGE_COUNT} flags, another userId and sessionId on every request`,
    path: `/api/frontend?appName=bench&environment=default&userId={n}&sessionId={n}&properties%5Bregion%5D=eu`,
    key: 'frontend',
    floor: 'frontend',
  },
  {
    id: 'frontend-small-distinct',
    label: 'frontend, 5 flags, another userId on every request',
    path: `/api/frontend?appName=bench&environment=default&sessionId=417392&properties%5Bregion%5D=eu&userId={n}`,
    key: 'frontendSmall',
    floor: 'frontend-small',
  },
];
