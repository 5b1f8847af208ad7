/**
 * The calls Edge mode makes to the upstream Unleash, and nothing else: which tokens are valid
 * (`POST /edge/validate`), a token scope's flags (`GET /api/client/features` with
 * `If-None-Match`), and the metrics collected here (`POST /api/client/metrics/bulk`). Only the
 * sync object (sync.ts) calls them, so the deployment's upstream traffic is O(scopes).
 */
import { log } from '../log';

/** Segments listed once, with ids on strategies: the snapshot inlines them itself when an SDK wants that. */
const UPSTREAM_CLIENT_SPEC = '4.2.0';
const TIMEOUT_MS = 10_000;
const USER_AGENT = 'unleash-worker-edge';

/** `admin` tokens are listed so that SDK routes can refuse them as Unleash does (403), never to serve flags. */
type TokenType = 'client' | 'frontend' | 'admin';

type CallKind = 'validate' | 'features' | 'metrics';

/**
 * What this isolate's calls to the upstream did, for /internal-backstage/health and /metrics:
 * calls and failures per kind (a failure: no answer, or an answer other than 2xx/304), the last
 * success and the last failure.
 */
export const upstreamStats = {
  calls: { validate: 0, features: 0, metrics: 0 } as Record<CallKind, number>,
  failures: { validate: 0, features: 0, metrics: 0 } as Record<CallKind, number>,
  lastSuccessAt: 0,
  lastError: null as string | null,
  lastErrorAt: 0,
};

export interface UpstreamToken {
  token: string;
  type: TokenType;
  projects: string[];
  environment: string;
}

export class UpstreamError extends Error {
  constructor(
    message: string,
    readonly status: number | null,
  ) {
    super(message);
  }
}

function failed(kind: CallKind, message: string): void {
  upstreamStats.failures[kind]++;
  upstreamStats.lastError = message;
  upstreamStats.lastErrorAt = Date.now();
}

async function call(kind: CallKind, url: string, init: RequestInit): Promise<Response> {
  upstreamStats.calls[kind]++;
  let response: Response;
  try {
    response = await fetch(url, { ...init, signal: AbortSignal.timeout(TIMEOUT_MS) });
  } catch (error) {
    const message = `upstream unreachable: ${error instanceof Error ? error.message : String(error)}`;
    failed(kind, message);
    throw new UpstreamError(message, null);
  }
  if (response.status < 300 || response.status === 304) upstreamStats.lastSuccessAt = Date.now();
  else failed(kind, `upstream ${new URL(url).pathname} answered ${response.status}`);
  return response;
}

/** `backend` is 7.x+'s name for `client`; `admin` and anything else never serve SDKs here. */
function sdkType(type: unknown): TokenType | null {
  if (type === 'client' || type === 'backend') return 'client';
  if (type === 'frontend') return 'frontend';
  if (type === 'admin') return 'admin';
  return null;
}

function environmentInSecret(secret: string): string | null {
  const colon = secret.indexOf(':');
  const dot = secret.indexOf('.', colon + 1);
  return colon >= 0 && dot > colon + 1 ? secret.slice(colon + 1, dot) : null;
}

/** The valid ones among `tokens`, as the upstream scopes them; invalid ones are simply absent. */
export async function validateTokens(base: string, tokens: readonly string[]): Promise<UpstreamToken[]> {
  const response = await call('validate', `${base}/edge/validate`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'user-agent': USER_AGENT },
    body: JSON.stringify({ tokens }),
  });
  if (response.status !== 200) throw new UpstreamError(`upstream /edge/validate answered ${response.status}`, response.status);
  const body = (await response.json()) as { tokens?: unknown };
  if (!Array.isArray(body.tokens)) throw new UpstreamError('upstream /edge/validate answered without a token list', 200);
  const asked = new Set(tokens);
  return body.tokens.flatMap((entry: unknown): UpstreamToken[] => {
    if (typeof entry !== 'object' || entry === null) return [];
    const { token, type, projects, environment } = entry as Record<string, unknown>;
    const kind = sdkType(type);
    if (typeof token !== 'string' || !asked.has(token) || kind === null) return [];
    // 6.10.1 leaves `environment` out (recorded: test/fixtures/edge-upstream-6.json); Unleash
    // Edge reads it from the secret then, `<projects>:<environment>.<…>`, as we do.
    const scopeEnvironment = typeof environment === 'string' ? environment : environmentInSecret(token);
    // Only tokens bound to one environment serve SDKs (SDK tokens always are); admin tokens are
    // kept only to be refused with Unleash's 403.
    if (kind !== 'admin' && (scopeEnvironment === null || scopeEnvironment === '*')) return [];
    if (!Array.isArray(projects) || !projects.every((p): p is string => typeof p === 'string')) return [];
    return [{ token, type: kind, projects: [...projects], environment: scopeEnvironment ?? '*' }];
  });
}

export type FeaturesAnswer = { status: 'unchanged' } | { status: 'changed'; etag: string | null; body: string };

/** A scope's flags; `unchanged` when the upstream answers 304 to `etag`. */
export async function fetchFeatures(base: string, token: string, etag: string | null): Promise<FeaturesAnswer> {
  const response = await call('features', `${base}/api/client/features`, {
    headers: {
      authorization: token,
      'unleash-client-spec': UPSTREAM_CLIENT_SPEC,
      'unleash-appname': USER_AGENT,
      'user-agent': USER_AGENT,
      ...(etag ? { 'if-none-match': etag } : {}),
    },
  });
  if (response.status === 304) return { status: 'unchanged' };
  if (response.status !== 200) {
    await response.body?.cancel();
    throw new UpstreamError(`upstream /api/client/features answered ${response.status}`, response.status);
  }
  return { status: 'changed', etag: response.headers.get('etag'), body: await response.text() };
}

/** Posts one chunk of metrics; a 4xx is logged and dropped (retrying cannot help), a 5xx or no answer thrown. */
export async function postBulkMetrics(base: string, token: string, body: string): Promise<void> {
  const response = await call('metrics', `${base}/api/client/metrics/bulk`, {
    method: 'POST',
    headers: { authorization: token, 'content-type': 'application/json', 'user-agent': USER_AGENT },
    body,
  });
  await response.body?.cancel();
  if (response.status >= 500) throw new UpstreamError(`upstream /api/client/metrics/bulk answered ${response.status}`, response.status);
  if (response.status >= 400) log.warn('upstream refused forwarded metrics', { status: response.status, bytes: body.length });
}
