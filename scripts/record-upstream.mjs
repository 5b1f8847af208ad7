#!/usr/bin/env node
/**
 * Records what a real Unleash answers to the calls Edge mode makes upstream, for the Worker
 * tests of Edge mode (test/edge/*.test.ts), which replay these answers: CI has no Unleash.
 *
 *   node scripts/record-upstream.mjs [--url http://127.0.0.1:4242] [--admin '*:*.…'] [--out test/fixtures/edge-upstream-8.json]
 *
 * test/fixtures/edge-upstream-8-v2.json comes from an 8.2.0 started with its v2 tokens on
 * (`UNLEASH_EXPERIMENTAL_SECURE_TOKEN=true`): every token it issues, and so every token
 * recorded, is then `<scope>:<env>.v2_<selector>_<secret>`.
 *
 * It creates, on that Unleash, flags, a segment, a custom strategy and API tokens named
 * `edge-rec-*` (reused when they exist; tokens are made anew each run), then records:
 * - `POST /edge/validate` for the tokens and for an unknown and a revoked one;
 * - `GET /api/client/features` per client token, then again with its ETag (the 304), in two
 *   phases: as seeded, and after a flag was switched off in development (`toggled`);
 * - `GET /api/frontend` for seeded contexts with the frontend token (what our Edge's own
 *   evaluation must equal);
 * - `POST /api/client/metrics/bulk` (its status).
 * The flag switched off is switched on again at the end, so a second run starts as the first.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';

const { values: args } = parseArgs({
  options: {
    url: { type: 'string', default: process.env.UPSTREAM_URL ?? 'http://127.0.0.1:4242' },
    admin: { type: 'string', default: process.env.UPSTREAM_ADMIN_TOKEN ?? '*:*.unleash-insecure-admin-api-token' },
    out: { type: 'string', default: 'test/fixtures/edge-upstream-8.json' },
  },
});
const BASE = args.url.replace(/\/$/, '');
const ADMIN = args.admin;
const PROJECT = 'default';
const DEV = 'development';
const PROD = 'production';
/** The spec version our upstream client announces (src/edge/upstream.ts): segments listed once. */
const CLIENT_SPEC = '4.2.0';

async function call(method, path, { auth = ADMIN, body, headers = {} } = {}) {
  const response = await fetch(BASE + path, {
    method,
    headers: {
      ...(auth ? { authorization: auth } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text };
}

async function must(method, path, options, ok = [200, 201, 202, 204]) {
  const answer = await call(method, path, options);
  if (!ok.includes(answer.status)) throw new Error(`${method} ${path}: ${answer.status} ${answer.text.slice(0, 300)}`);
  return answer.text ? JSON.parse(answer.text) : null;
}

/** Unleash 8.1+'s v2 token form. */
const V2_TOKEN = /\.v2_[A-Za-z0-9_-]{22}_[A-Za-z0-9_-]{43}$/;

const FLAGS = ['edge-rec-rollout', 'edge-rec-users', 'edge-rec-off', 'edge-rec-custom', 'edge-rec-segment', 'edge-rec-variants'];

async function seed() {
  // A strategy our evaluator does not know (Unleash calls it a custom strategy): Edge answers it off.
  await must('POST', '/api/admin/strategies', { body: { name: 'edge-rec-custom-strategy', parameters: [] } }, [200, 201, 409]);
  const segments = await must('GET', '/api/admin/segments');
  let segment = segments.segments.find((s) => s.name === 'edge-rec-segment');
  if (!segment) {
    segment = await must('POST', '/api/admin/segments', {
      body: { name: 'edge-rec-segment', constraints: [{ contextName: 'userId', operator: 'IN', values: ['u1', 'u3', 'u5', 'u7'] }] },
    });
  }
  for (const name of FLAGS) {
    const exists = await call('GET', `/api/admin/projects/${PROJECT}/features/${name}`);
    if (exists.status === 200) continue;
    await must('POST', `/api/admin/projects/${PROJECT}/features`, { body: { name, type: 'release', description: `recorded by ${name}` } });
    const strategies = {
      'edge-rec-rollout': [{ name: 'flexibleRollout', parameters: { rollout: '50', stickiness: 'userId', groupId: 'edge-rec-rollout' } }],
      'edge-rec-users': [
        { name: 'default', constraints: [{ contextName: 'userId', operator: 'IN', values: ['u1', 'u2', 'u3', 'u4', 'u5'] }] },
      ],
      'edge-rec-off': [{ name: 'default' }],
      'edge-rec-custom': [{ name: 'edge-rec-custom-strategy', parameters: {} }],
      'edge-rec-segment': [{ name: 'default', segments: [segment.id] }],
      'edge-rec-variants': [
        {
          name: 'flexibleRollout',
          parameters: { rollout: '100', stickiness: 'default', groupId: 'edge-rec-variants' },
          variants: [
            { name: 'blue', weight: 500, weightType: 'variable', stickiness: 'default', payload: { type: 'string', value: 'b' } },
            { name: 'green', weight: 500, weightType: 'variable', stickiness: 'default' },
          ],
        },
      ],
    }[name];
    for (const environment of [DEV, PROD]) {
      for (const strategy of strategies) {
        const { segments: ids, ...rest } = strategy;
        const created = await must('POST', `/api/admin/projects/${PROJECT}/features/${name}/environments/${environment}/strategies`, {
          body: { constraints: [], parameters: {}, ...rest },
        });
        if (ids)
          await must('POST', '/api/admin/segments/strategies', {
            body: { projectId: PROJECT, strategyId: created.id, environmentId: environment, segmentIds: ids },
          });
      }
      // Off everywhere is edge-rec-off's point; the others are on in development, two in production.
      const on = name !== 'edge-rec-off' && (environment === DEV || name === 'edge-rec-rollout' || name === 'edge-rec-users');
      if (on) await must('POST', `/api/admin/projects/${PROJECT}/features/${name}/environments/${environment}/on`);
    }
  }
}

async function token(tokenName, type, environment) {
  const made = await must('POST', '/api/admin/api-tokens', { body: { tokenName, type, environment, projects: [PROJECT] } });
  return made.secret;
}

/** A small seeded generator, so a recording names the same contexts each run. */
function random(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function contexts(count) {
  const next = random(31);
  return Array.from({ length: count }, (_, i) => ({
    userId: `u${Math.floor(next() * 9)}`,
    sessionId: String(Math.floor(next() * 1e6)),
    ...(next() < 0.3 ? { 'properties[plan]': next() < 0.5 ? 'pro' : 'free' } : {}),
    appName: i % 2 ? 'edge-rec-app' : 'frontend-api',
  }));
}

const exchanges = [];
function parseOrText(text) {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
function keep(name, request, answer) {
  exchanges.push({
    name,
    request,
    response: {
      status: answer.status,
      etag: answer.headers.get('etag'),
      contentType: answer.headers.get('content-type'),
      body: answer.text ? parseOrText(answer.text) : null,
    },
  });
}

async function recordFeatures(phase, secret) {
  const headers = { 'unleash-client-spec': CLIENT_SPEC };
  const full = await call('GET', '/api/client/features', { auth: secret, headers });
  keep('features', { phase, token: secret, ifNoneMatch: null }, full);
  const etag = full.headers.get('etag');
  const again = await call('GET', '/api/client/features', { auth: secret, headers: { ...headers, 'if-none-match': etag } });
  keep('features', { phase, token: secret, ifNoneMatch: etag }, again);
}

async function main() {
  const version = (await must('GET', '/api/admin/ui-config')).version;
  await seed();
  const run = Date.now().toString(36);
  const tokens = {
    clientDev: await token(`edge-rec-client-dev-${run}`, 'client', DEV),
    clientProd: await token(`edge-rec-client-prod-${run}`, 'client', PROD),
    frontendDev: await token(`edge-rec-frontend-dev-${run}`, 'frontend', DEV),
    revoked: await token(`edge-rec-revoked-${run}`, 'client', DEV),
  };
  // An unknown token of the form the upstream issues (classic, or v2 when it makes those).
  tokens.unknown = V2_TOKEN.test(tokens.clientDev)
    ? `${PROJECT}:${DEV}.v2_edge${'0'.repeat(18)}_${'0'.repeat(43)}`
    : `${PROJECT}:${DEV}.edge0000000000000000000000000000000000000000000000000000`;
  const all = Object.values(tokens);
  keep('validate', { phase: 'seeded', tokens: all }, await call('POST', '/edge/validate', { auth: null, body: { tokens: all } }));
  // An admin key, as the upstream lists it (an Edge refuses it on the SDK API with Unleash's 403).
  keep('validate', { phase: 'admin', tokens: [ADMIN] }, await call('POST', '/edge/validate', { auth: null, body: { tokens: [ADMIN] } }));
  await recordFeatures('seeded', tokens.revoked);
  // Unleash reads new tokens into its cache at once, and drops deleted ones at its next refresh.
  // By its whole secret, which names a classic and a v2 token alike (a v2 one is listed by selector).
  await must('DELETE', `/api/admin/api-tokens/${encodeURIComponent(tokens.revoked)}`);
  // 8.2.0's /edge/validate goes on listing a deleted token (its client API refuses it at once):
  // wait at most a little over Unleash's one-minute token cache refresh.
  let afterRevoke;
  for (let i = 0; i < 70; i++) {
    afterRevoke = await call('POST', '/edge/validate', { auth: null, body: { tokens: all } });
    if (!JSON.parse(afterRevoke.text).tokens.some((t) => t.token === tokens.revoked)) break;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  keep('validate', { phase: 'revoked', tokens: all }, afterRevoke);
  keep(
    'features',
    { phase: 'revoked', token: tokens.revoked, ifNoneMatch: null },
    await call('GET', '/api/client/features', { auth: tokens.revoked, headers: { 'unleash-client-spec': CLIENT_SPEC } }),
  );

  await recordFeatures('seeded', tokens.clientDev);
  await recordFeatures('seeded', tokens.clientProd);
  for (const context of contexts(60)) {
    const query = new URLSearchParams(context).toString();
    keep(
      'frontend',
      { phase: 'seeded', token: tokens.frontendDev, query },
      await call('GET', `/api/frontend?${query}`, { auth: tokens.frontendDev }),
    );
  }

  await must('POST', `/api/admin/projects/${PROJECT}/features/edge-rec-users/environments/${DEV}/off`);
  // The client API's ETag follows the revision, which Unleash refreshes about once a second.
  await new Promise((resolve) => setTimeout(resolve, 2500));
  await recordFeatures('toggled', tokens.clientDev);
  await must('POST', `/api/admin/projects/${PROJECT}/features/edge-rec-users/environments/${DEV}/on`);

  const now = new Date().toISOString();
  const bulk = {
    applications: [],
    metrics: [{ featureName: 'edge-rec-rollout', appName: 'edge-rec-app', environment: DEV, timestamp: now, yes: 1, no: 0, variants: {} }],
  };
  keep(
    'bulk',
    { phase: 'seeded', token: tokens.clientDev },
    await call('POST', '/api/client/metrics/bulk', { auth: tokens.clientDev, body: bulk }),
  );

  const fixture = {
    recordedFrom: BASE,
    unleashVersion: version,
    recordedAt: new Date().toISOString(),
    clientSpec: CLIENT_SPEC,
    tokens,
    exchanges,
  };
  mkdirSync(dirname(args.out), { recursive: true });
  writeFileSync(args.out, JSON.stringify(fixture, null, 2) + '\n');
  console.log(`recorded ${exchanges.length} exchanges from Unleash ${version} at ${BASE} into ${args.out}`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
