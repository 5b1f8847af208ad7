/**
 * The upstream Unleash of the Edge-mode Worker tests: a replay of answers RECORDED from the
 * real Unleash 8.2.0 and 6.10.1 by scripts/record-upstream.mjs (test/fixtures/edge-upstream-*.json;
 * `8v2` is 8.2.0 issuing its v2 tokens).
 * It runs in the Node process that runs Miniflare (vitest.config.ts makes it the outbound
 * service of the `edge` project), so every fetch the Worker and its sync object make goes here.
 *
 * Replay rules, nothing more: `/edge/validate` answers the recorded list of valid tokens of the
 * current phase, cut to the tokens asked about; `/api/client/features` answers the recording of
 * (phase, token, If-None-Match), or that token's full answer when the ETag sent was not
 * recorded; `/api/client/metrics/bulk` answers the recorded status and keeps the body. Tests
 * move between the recorded phases (`seeded`, `toggled`; `revoked` for validation) and can
 * take the upstream down, through the `UPSTREAM` service binding.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

interface Exchange {
  name: 'validate' | 'features' | 'frontend' | 'bulk';
  request: { phase: string; token?: string; ifNoneMatch?: string | null; tokens?: string[]; query?: string };
  response: { status: number; etag: string | null; contentType: string | null; body: unknown };
}

export interface Fixture {
  unleashVersion: string;
  tokens: { clientDev: string; clientProd: string; frontendDev: string; revoked: string; unknown: string };
  exchanges: Exchange[];
}

export const UPSTREAM_HOST = 'upstream.test';

export type FixtureName = '6' | '8' | '8v2';

function load(version: '6' | '8' | '8-v2'): Fixture {
  return JSON.parse(readFileSync(fileURLToPath(new URL(`../fixtures/edge-upstream-${version}.json`, import.meta.url).href), 'utf8'));
}
const fixtures: Record<FixtureName, Fixture> = { '8': load('8'), '6': load('6'), '8v2': load('8-v2') };

interface State {
  fixture: FixtureName;
  phase: string;
  validatePhase: string;
  down: boolean;
}
let state: State = { fixture: '8', phase: 'seeded', validatePhase: 'seeded', down: false };
let received: { method: string; path: string; token: string | null; ifNoneMatch: string | null; body: string }[] = [];

function answer(recorded: Exchange['response'], body = recorded.body): Response {
  const headers = new Headers();
  if (recorded.etag) headers.set('etag', recorded.etag);
  if (recorded.contentType) headers.set('content-type', recorded.contentType);
  return new Response(recorded.status === 304 || body === null ? null : JSON.stringify(body), { status: recorded.status, headers });
}

export async function upstream(request: Request): Promise<Response> {
  try {
    return await replay(request);
  } catch (error) {
    if (state.down) throw error;
    console.error('edge-upstream replay failed', error);
    throw error;
  }
}

async function replay(request: Request): Promise<Response> {
  const url = new URL(request.url);
  if (url.host !== UPSTREAM_HOST) return new Response('tests have no network', { status: 502 });
  const token = request.headers.get('authorization');
  const ifNoneMatch = request.headers.get('if-none-match');
  const body = request.method === 'POST' ? await request.text() : '';
  received.push({ method: request.method, path: url.pathname, token, ifNoneMatch, body });
  // An upstream that is down: the connection fails, as it does when Unleash is stopped.
  if (state.down) throw new Error('connect ECONNREFUSED (the recorded upstream is down)');
  const fixture = fixtures[state.fixture];
  const find = (name: Exchange['name'], match: (request: Exchange['request']) => boolean) =>
    fixture.exchanges.find((exchange) => exchange.name === name && match(exchange.request));
  if (request.method === 'POST' && url.pathname === '/edge/validate') {
    const asked = new Set((JSON.parse(body) as { tokens: string[] }).tokens);
    const recorded = find('validate', (r) => r.phase === state.validatePhase)!;
    const valid = (recorded.response.body as { tokens: { token: string }[] }).tokens.filter((t) => asked.has(t.token));
    return answer(recorded.response, { tokens: valid });
  }
  if (request.method === 'GET' && url.pathname === '/api/client/features') {
    const recorded =
      find('features', (r) => r.phase === state.phase && r.token === token && r.ifNoneMatch === ifNoneMatch) ??
      find('features', (r) => r.phase === state.phase && r.token === token && r.ifNoneMatch === null) ??
      find('features', (r) => r.phase === 'seeded' && r.token === token && r.ifNoneMatch === ifNoneMatch) ??
      find('features', (r) => r.phase === 'seeded' && r.token === token && r.ifNoneMatch === null);
    if (!recorded) return new Response('no recording for this token', { status: 599 });
    return answer(recorded.response);
  }
  if (request.method === 'POST' && url.pathname === '/api/client/metrics/bulk') {
    return answer(find('bulk', () => true)!.response);
  }
  return new Response(`no recording for ${request.method} ${url.pathname}`, { status: 599 });
}

/** `POST /state` (a partial State), `POST /reset`, `GET /requests`, `GET /fixture`. */
export async function upstreamControl(request: Request): Promise<Response> {
  const url = new URL(request.url);
  if (request.method === 'POST' && url.pathname === '/state') {
    state = { ...state, ...((await request.json()) as Partial<State>) };
    return new Response(null, { status: 204 });
  }
  if (request.method === 'POST' && url.pathname === '/reset') {
    state = { fixture: '8', phase: 'seeded', validatePhase: 'seeded', down: false };
    received = [];
    return new Response(null, { status: 204 });
  }
  if (url.pathname === '/fixture') return Response.json(fixtures[(url.searchParams.get('version') as FixtureName | null) ?? state.fixture]);
  return Response.json(received);
}
