/**
 * What the Edge-mode Worker tests (test/edge/) share: the recorded upstream's control calls,
 * requests to the Edge Worker, and the recorded answers they are compared with.
 */
import { env, exports } from 'cloudflare:workers';
import { forgetEdgeCaches, syncObject } from '../../src/edge/scope';
import type { Env } from '../../src/env';
import type { Fixture, FixtureName } from './edge-upstream';

export const workerEnv = env as unknown as Env & { UPSTREAM: Fetcher };
/** The recorder called the upstream from loopback: remoteAddress strategies saw this address. */
export const RECORDER_ADDRESS = { headers: { 'cf-connecting-ip': '127.0.0.1' } };

export interface Received {
  method: string;
  path: string;
  token: string | null;
  ifNoneMatch: string | null;
  body: string;
}

export async function upstreamState(state: Record<string, unknown>): Promise<void> {
  await workerEnv.UPSTREAM.fetch('http://control/state', { method: 'POST', body: JSON.stringify(state) });
}
export async function upstreamReceived(): Promise<Received[]> {
  return (await workerEnv.UPSTREAM.fetch('http://control/requests')).json();
}
export async function fixture(version: FixtureName): Promise<Fixture> {
  return (await workerEnv.UPSTREAM.fetch(`http://control/fixture?version=${version}`)).json();
}

/** The recorded upstream forgets what it was asked, and the sync object starts as after an eviction (it outlives a test file). */
export async function resetEdge(): Promise<void> {
  await workerEnv.UPSTREAM.fetch('http://control/reset', { method: 'POST' });
  await syncObject(workerEnv).forgetMemory();
  forgetEdgeCaches();
}

/** A request to the Edge Worker, from a random address unless the headers name one. */
export function call(
  method: string,
  path: string,
  token: string | null,
  options: { body?: unknown; headers?: Record<string, string> } = {},
) {
  const headers = new Headers(options.headers);
  if (token !== null) headers.set('authorization', token);
  if (!headers.has('cf-connecting-ip'))
    headers.set('cf-connecting-ip', `10.0.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`);
  if (options.body !== undefined) headers.set('content-type', 'application/json');
  return exports.default.fetch(
    new Request(`http://edge.local${path}`, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    }),
  );
}

export async function json<T = any>(response: Response): Promise<T> {
  const text = await response.text();
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new Error(`expected JSON, got ${response.status}: ${text.slice(0, 200)}`);
  }
}

export type Feature = { name: string; enabled: boolean; strategies: unknown[] };
/** The upstream's recorded client answer for a token in a phase of the recording. */
export const recordedFeatures = (f: Fixture, phase: string, token: string) =>
  f.exchanges.find(
    (e) => e.name === 'features' && e.request.phase === phase && e.request.token === token && e.request.ifNoneMatch === null,
  )!.response.body as { features: Feature[]; segments: unknown[] };

export const byName = <T extends { name: string }>(list: T[]) => [...list].sort((a, b) => a.name.localeCompare(b.name));
