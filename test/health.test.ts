import { describe, expect, it } from 'vitest';
import { bodyOf, call } from './support/http';

describe('GET /health', () => {
  it('answers without a key', async () => {
    const response = await call('GET', '/health', { token: null });
    expect(response.status).toBe(200);
    expect(await bodyOf(response)).toEqual({ health: 'GOOD' });
  });
});
