/**
 * SDK posts (frontend evaluation, metrics, registration) change no flag configuration, so they
 * must not count as writes of the isolate: each counted one made the isolate's next SDK request
 * read the revision from D1 again (src/db/coherence.ts), which the frontend bench paid per request.
 */
import { describe, expect, it } from 'vitest';
import { localWriteCount } from '../src/db/coherence';
import { call, createToken } from './support/http';

describe('SDK posts', () => {
  it('are not writes of the isolate, while an admin write is', async () => {
    const client = await createToken({ tokenName: 'posts-client', type: 'client', projects: ['*'], environment: 'development' });
    const frontend = await createToken({ tokenName: 'posts-frontend', type: 'frontend', projects: ['*'], environment: 'development' });
    const before = localWriteCount();
    const posts = [
      await call('POST', '/api/frontend', { token: frontend, body: { context: { userId: 'someone-new' } } }),
      await call('POST', '/api/client/register', {
        token: client,
        body: {
          appName: 'posts-app',
          instanceId: 'i-1',
          sdkVersion: 'unleash-client-node:6.0.0',
          strategies: ['default'],
          started: new Date().toISOString(),
          interval: 15000,
        },
      }),
      await call('POST', '/api/client/metrics', {
        token: client,
        body: {
          appName: 'posts-app',
          instanceId: 'i-1',
          bucket: { start: new Date().toISOString(), stop: new Date().toISOString(), toggles: {} },
        },
      }),
    ];
    expect(posts.map((response) => response.status < 300)).toEqual([true, true, true]);
    expect(localWriteCount()).toBe(before);
    const write = await call('POST', '/api/admin/projects/default/features', { body: { name: 'posts-admin-write' } });
    expect(write.status).toBe(201);
    expect(localWriteCount()).toBeGreaterThan(before);
  });
});
