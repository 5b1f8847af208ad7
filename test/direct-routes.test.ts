import { env } from 'cloudflare:workers';
import { Router, type IRequest } from 'itty-router';
import { describe, expect, it } from 'vitest';
import { directRoutes } from '../src/direct-routes';
import type { Env } from '../src/env';
import { call } from './support/http';
import { captureLogs } from './support/logs';

const ctx = { waitUntil: () => {}, passThroughOnException: () => {}, props: {} } as unknown as ExecutionContext;

function table() {
  const router = Router<IRequest, [Env, ExecutionContext], Response>();
  router.get('/items/:id', ({ params }) => new Response(`item ${params['id']}`));
  router.get('/items/special', () => new Response('special')); // shadowed by /items/:id
  router.get(
    '/plain',
    (request) => new Response(`plain ${JSON.stringify(request.query)} ${JSON.stringify(request.params)} ${request.route}`),
  );
  router.post('/plain', () => new Response('posted'));
  router.get('/plain', () => new Response('second')); // a duplicate never answers
  router.get('/boom', () => {
    throw new Error('boom');
  });
  router.get('/wild/*', () => new Response('wild'));
  return directRoutes(router);
}

describe('direct routes', () => {
  const find = table();

  it('take exact paths with the handler the router would pick, params and query included', async () => {
    const url = new URL('http://x/plain?a=1&a=2&b=3');
    const route = find('GET', '/plain')!;
    const response = await route(new Request(url), url, env as unknown as Env, ctx);
    expect(await response.text()).toBe('plain {"a":["1","2"],"b":"3"} {} /plain');
    const post = find('POST', '/plain')!;
    expect(await (await post(new Request(url, { method: 'POST' }), url, env as unknown as Env, ctx)).text()).toBe('posted');
  });

  it('leave to the router a path an earlier pattern would match, and patterns themselves', () => {
    expect(find('GET', '/items/special')).toBeUndefined();
    expect(find('GET', '/items/:id')).toBeUndefined();
    expect(find('GET', '/wild/*')).toBeUndefined();
    expect(find('DELETE', '/plain')).toBeUndefined();
  });

  it('turn a thrown error into the error answer, as the router does', async () => {
    const url = new URL('http://x/boom');
    const logs = captureLogs();
    const response = await find('GET', '/boom')!(new Request(url), url, env as unknown as Env, ctx);
    expect(response.status).toBe(500);
    expect(logs.entries).toEqual([expect.objectContaining({ level: 'error', msg: 'unhandled error', method: 'GET', path: '/boom' })]);
    expect(((await response.json()) as { name: string }).name).toBe('UnknownError');
  });

  it('answer through the Worker as the router would: HEAD, repeated slashes, trailing slash', async () => {
    expect((await call('GET', '/health', { token: null })).status).toBe(200);
    const head = await call('HEAD', '/api/client/features', { token: null });
    expect(head.status).toBe(401);
    expect(await head.text()).toBe('');
    expect((await call('GET', '//api//client/features', { token: null })).status).toBe(401);
    expect((await call('GET', '/api/client/features/', { token: null })).status).toBe(401);
  });
});
