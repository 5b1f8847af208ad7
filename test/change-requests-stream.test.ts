/**
 * An SDK holding an open stream sees nothing of a change request while it is drafted, reviewed
 * and approved, and sees the change as soon as it is applied, woken by the apply itself (the
 * stream's revision tick is far longer than the wait).
 */
import { beforeAll, expect, it } from 'vitest';
import { adminOk, createProject } from './support/admin';
import { count } from './support/db';
import { bodyOf, call, createToken, envWith, fetchWith } from './support/http';
import { unique } from './support/names';
import { sseReader, type SseEvent } from './support/sse';
import { signInAs } from './support/users';

const DEV = 'development';
const SLOW_TICK = envWith({ SDK_REVISION_CHECK_MS: '600000' });
let project: string;
let author: string;
let backend: string;

beforeAll(async () => {
  project = await createProject(unique('crs'), [DEV]);
  const role = await bodyOf(
    await adminOk('POST', '/api/admin/roles', {
      name: unique('crs-role'),
      description: 'toggles through change requests',
      type: 'custom',
      permissions: [{ name: 'UPDATE_FEATURE_ENVIRONMENT', environment: DEV }],
    }),
  );
  author = await signInAs('Viewer', async (userId) => {
    await adminOk('POST', `/api/admin/projects/${project}/access`, { roles: [role.id], users: [userId] });
  });
  await adminOk('PUT', `/api/admin/projects/${project}/environments/${DEV}/change-requests/config`, {
    changeRequestsEnabled: true,
    requiredApprovals: 1,
  });
  backend = await createToken({ tokenName: unique('crs-sdk'), type: 'backend', environment: DEV });
});

/** The next event that is not a keep-alive comment. */
async function nextEvent(stream: ReturnType<typeof sseReader>): Promise<SseEvent> {
  for (;;) {
    const event = await stream.next(5000);
    if (event.event !== undefined) return event;
  }
}

it('an open stream sees the change only once the request is applied', async () => {
  const name = unique('crs-flag');
  await adminOk('POST', `/api/admin/projects/${project}/features`, { name });
  const response = await fetchWith(SLOW_TICK, 'GET', '/api/client/streaming', { authorization: backend });
  expect(response.status).toBe(200);
  const stream = sseReader(response);
  try {
    const connected = await nextEvent(stream);
    expect(connected.event).toBe('unleash-connected');
    const hydration = JSON.parse(connected.data!) as { events: { features: { name: string; enabled: boolean }[] }[] };
    expect(hydration.events[0]!.features.find((feature) => feature.name === name)?.enabled).toBe(false);

    const revision = () => count('SELECT coalesce(max(event_id), 0) AS n FROM sdk_changes');
    const before = await revision();
    const base = `/api/admin/projects/${project}/change-requests`;
    const draftPath = `/api/admin/projects/${project}/environments/${DEV}/change-requests`;
    const draftResponse = await call('POST', draftPath, {
      token: author,
      body: { feature: name, action: 'updateEnabled', payload: { enabled: true } },
    });
    expect(draftResponse.status).toBe(200);
    const { id } = await bodyOf(draftResponse);
    expect((await call('PUT', `${base}/${id}/state`, { token: author, body: { state: 'In review' } })).status).toBe(200);
    await adminOk('PUT', `${base}/${id}/state`, { state: 'Approved' });

    // The SDK revision did not move (polling SDKs keep their ETag), nor did anything reach the stream:
    expect(await revision()).toBe(before);
    // the first event it sends is the applied change.
    const applied = Date.now();
    await adminOk('PUT', `${base}/${id}/state`, { state: 'Applied' });
    const updated = await nextEvent(stream);
    expect(Date.now() - applied).toBeLessThan(5000);
    expect(updated.event).toBe('unleash-updated');
    const delta = JSON.parse(updated.data!) as { events: { type: string; feature: { name: string; enabled: boolean } }[] };
    expect(delta.events.map((event) => [event.type, event.feature.name, event.feature.enabled])).toEqual([['feature-updated', name, true]]);
  } finally {
    await stream.cancel();
  }
});
