/**
 * Edge mode in front of a replay of Unleash 6.10.1 (test/support/edge-upstream.ts): the same
 * engine answers an older upstream's flags as that upstream answered them.
 */

import { beforeAll, describe, expect, it } from 'vitest';
import type { Fixture } from '../support/edge-upstream';
import {
  RECORDER_ADDRESS,
  upstreamState,
  fixture,
  call,
  json,
  recordedFeatures,
  byName,
  resetEdge,
  type Feature,
} from '../support/edge-client';

let f6: Fixture;
beforeAll(async () => {
  await resetEdge();
  f6 = await fixture('6');
});

describe('Edge mode in front of Unleash 6.10.1 (recorded)', () => {
  it('serves a 6.10.1 scope and answers its frontend API as 6.10.1 did', async () => {
    await upstreamState({ fixture: '6' });
    const first = await call('GET', '/api/client/features', f6.tokens.clientDev, { headers: { 'unleash-client-spec': '5.2.0' } });
    expect(first.status).toBe(200);
    const body = await json<{ features: Feature[] }>(first);
    expect(byName(body.features)).toEqual(byName(recordedFeatures(f6, 'seeded', f6.tokens.clientDev).features));
    for (const exchange of f6.exchanges.filter((e) => e.name === 'frontend')) {
      const ours = await json<{ toggles: { name: string }[] }>(
        await call('GET', `/api/frontend?${exchange.request.query}`, f6.tokens.frontendDev, RECORDER_ADDRESS),
      );
      const theirs = (exchange.response.body as { toggles: { name: string }[] }).toggles;
      const differ = [...ours.toggles, ...theirs].filter(
        (t) => JSON.stringify(ours.toggles.find((o) => o.name === t.name)) !== JSON.stringify(theirs.find((o) => o.name === t.name)),
      );
      expect(differ, exchange.request.query).toEqual([]);
      expect(byName(ours.toggles), exchange.request.query).toEqual(
        byName((exchange.response.body as { toggles: { name: string }[] }).toggles),
      );
    }
  });
});
