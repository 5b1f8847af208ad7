import { describe, expect, it } from 'vitest';
import { bodyOf, call } from './support/http';

describe('GET /health', () => {
  it('answers without a key', async () => {
    const response = await call('GET', '/health', { token: null });
    expect(response.status).toBe(200);
    expect(await bodyOf(response)).toEqual({ health: 'GOOD' });
  });
});

describe('GET /ready (Unleash 7+)', () => {
  it('answers as 8.2.0 does when the database answers, without a key', async () => {
    const response = await call('GET', '/ready', { token: null });
    expect(response.status).toBe(200);
    expect(await bodyOf(response)).toEqual({ health: 'GOOD' });
  });
});
