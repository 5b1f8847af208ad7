/** Request helpers for tests: they go through the Worker's real fetch handler. */
import { createExecutionContext } from 'cloudflare:test';
import { env, exports } from 'cloudflare:workers';
import worker from '../../src/index';
import type { Env } from '../../src/env';

export const ADMIN_TOKEN = '*:*.test-admin-token';
export const BASE = 'http://localhost';

export interface CallOptions {
  token?: string | null;
  body?: unknown;
  /** Raw body text, sent as is (for malformed JSON and the like). */
  rawBody?: string;
  contentType?: string | null;
  headers?: Record<string, string>;
  /** `manual` to see a redirect itself (the Worker's fetch follows it by default). */
  redirect?: 'follow' | 'manual';
}

function randomAddress(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(4));
  return `10.${bytes[1]}.${bytes[2]}.${bytes[3]}`;
}

/** Sends a request to the Worker; JSON bodies get `content-type: application/json`. */
export async function call(method: string, path: string, options: CallOptions = {}): Promise<Response> {
  const headers = new Headers(options.headers);
  // Public routes are rate limited per client address: each call comes from its own address
  // unless the test names one (test/rate-limit.test.ts does).
  if (!headers.has('cf-connecting-ip')) headers.set('cf-connecting-ip', randomAddress());
  const token = options.token === undefined ? ADMIN_TOKEN : options.token;
  if (token !== null) headers.set('authorization', token);
  let body: string | undefined;
  if (options.rawBody !== undefined) body = options.rawBody;
  else if (options.body !== undefined) body = JSON.stringify(options.body);
  const contentType = options.contentType === undefined ? (body !== undefined ? 'application/json' : null) : options.contentType;
  if (contentType !== null) headers.set('content-type', contentType);
  // A string body makes Request add `text/plain`; bytes let a test send no content type.
  const payload = body !== undefined && contentType === null ? new TextEncoder().encode(body) : body;
  return exports.default.fetch(new Request(`${BASE}${path}`, { method, headers, body: payload, redirect: options.redirect }));
}

/** The test bindings with some changed (a slower revision tick, a failing KV…). */
export function envWith(changes: Partial<Env>): Env {
  return { ...(env as unknown as Env), ...changes };
}

/**
 * Sends a request to the Worker's fetch handler with the given bindings, in an execution
 * context of its own; JSON bodies get `content-type: application/json`.
 */
export function fetchWith(
  workerEnv: Env,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<Response> {
  const all = body === undefined ? headers : { ...headers, 'content-type': 'application/json' };
  const request = new Request(`${BASE}${path}`, { method, headers: all, body: body === undefined ? undefined : JSON.stringify(body) });
  return worker.fetch(request as Request<unknown, IncomingRequestCfProperties>, workerEnv, createExecutionContext());
}

/** The JSON body of a response (fails the test if it is not JSON). */
export async function bodyOf<T = any>(response: Response): Promise<T> {
  const text = await response.text();
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new Error(`expected a JSON body, got ${response.status}: ${text.slice(0, 200)}`);
  }
}

/** Creates an API token through the API and returns its secret. */
export async function createToken(body: Record<string, unknown>): Promise<string> {
  const response = await call('POST', '/api/admin/api-tokens', { body });
  if (response.status !== 201) throw new Error(`token creation failed: ${response.status} ${await response.text()}`);
  return (await bodyOf<{ secret: string }>(response)).secret;
}

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** Asserts the Unleash error body shape and returns it. */
export async function expectError(response: Response, status: number, name: string) {
  const body = await bodyOf<{ id: string; name: string; message: string; details: { message: string; path?: string }[] }>(response);
  if (
    response.status !== status ||
    body.name !== name ||
    !UUID.test(body.id) ||
    typeof body.message !== 'string' ||
    !Array.isArray(body.details)
  ) {
    throw new Error(`expected ${status} ${name}, got ${response.status} ${JSON.stringify(body)}`);
  }
  return body;
}
