/**
 * Flag links (Unleash 7.0+), replayed against answers recorded from the real Unleash 8.2.0 by
 * `scripts/record-unleash8.mjs` (test/recorded/unleash8/feature-links.json).
 */
import { describe, expect, it } from 'vitest';
import recorded from './recorded/unleash8/feature-links.json';
import { createFeature } from './support/admin';
import { signedInUser, withSession } from './support/auth';
import { count, eventsSince, parsedEvent, rows } from './support/db';
import { bodyOf, call, createToken, expectError } from './support/http';
import { unique } from './support/names';

const P = '/api/admin/projects/default/features';

async function maxEventId(): Promise<number> {
  const [row] = await rows<{ id: number | null }>('SELECT max(id) AS id FROM events');
  return row?.id ?? 0;
}

async function linksOf(flag: string): Promise<{ id: string; url: string; title: string | null; feature: string }[]> {
  return (await bodyOf(await call('GET', `${P}/${flag}`))).links;
}

const linkCount = (flag: string) => count('SELECT count(*) AS n FROM feature_links WHERE feature_name = ?', flag);

/** An error answer without its per-request id, to compare with a recorded one. */
async function errorOf(response: Response) {
  const { id: _id, ...rest } = await bodyOf(response);
  return rest;
}

describe('flag links', () => {
  it('stores each URL as 8.2.0 stored it, or refuses it with its error', async () => {
    for (let start = 0; start < recorded.urls.length; start += 9) {
      const flag = unique('links-urls');
      await createFeature(flag);
      for (const { url, status, ...expected } of recorded.urls.slice(start, start + 9)) {
        const before = await linkCount(flag);
        const response = await call('POST', `${P}/${flag}/link`, { body: { url } });
        expect({ url, status: response.status }).toEqual({ url, status });
        if ('stored' in expected) {
          expect((await linksOf(flag)).at(-1)!.url).toBe(expected.stored);
        } else {
          expect(await errorOf(response)).toEqual(expected.error);
          expect(await linkCount(flag)).toBe(before);
        }
      }
    }
  });

  it('adds, updates and removes links with the bodies, read, limit and events 8.2.0 has', async () => {
    const flag = unique('links-cases');
    await createFeature(flag);
    const first = await maxEventId();
    const cases = new Map(recorded.cases.map((entry) => [entry.label, entry]));
    const replay = async (label: string, path: string) => {
      const entry = cases.get(label)!;
      const response = await call(entry.method, `${P}/${flag}${path}`, entry.body === undefined ? {} : { body: entry.body });
      expect({ label, status: response.status }).toEqual({ label, status: entry.status });
      if (entry.answer !== null) expect(await errorOf(response)).toEqual(entry.answer);
      return response;
    };
    for (const label of ['no url', 'object title']) await replay(label, '/link');
    expect(await linkCount(flag)).toBe(0);
    expect((await eventsSince(first)).length).toBe(0);
    for (const label of ['number title', 'null title and an extra key', 'title']) await replay(label, '/link');
    let links = await linksOf(flag);
    const id = links[0]!.id;
    expect(id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    await replay('update without title keeps it', `/link/${id}`);
    await replay('update with null title', `/link/${id}`);
    await replay('update of an unknown id', '/link/nope');
    const beforeBadUpdate = await linksOf(flag);
    await replay('update with a bad url', `/link/${id}`);
    expect(await linksOf(flag)).toEqual(beforeBadUpdate);
    await replay('delete of an unknown id', '/link/nope');
    for (let i = 0; (await linkCount(flag)) < 10; i += 1) {
      expect((await call('POST', `${P}/${flag}/link`, { body: { url: `https://fill${i}.com` } })).status).toBe(204);
    }
    const full = await maxEventId();
    for (const label of ['eleventh link', 'eleventh link, bad url', 'eleventh link, object title']) await replay(label, '/link');
    expect(await linkCount(flag)).toBe(10);
    expect((await eventsSince(full)).length).toBe(0);
    links = await linksOf(flag);
    await replay('delete', `/link/${links.at(-1)!.id}`);

    const read = await bodyOf(await call('GET', `${P}/${flag}`));
    links = read.links;
    expect(Object.keys(links[0]!)).toEqual(recorded.linkKeys);
    expect(links.map(({ url, title }) => ({ url, title }))).toEqual(recorded.links);
    expect(links.every((link) => link.feature === flag)).toBe(true);
    // `links` sits where both versions put it: just before `collaborators`.
    const keys = Object.keys(read);
    expect(keys.indexOf('links') + 1).toBe(keys.indexOf('collaborators'));

    const events = (await eventsSince(first)).map((event) => ({
      ...parsedEvent(event),
      featureName: event.feature_name,
      project: event.project,
      environment: event.environment,
    }));
    expect(events.every((event) => event.featureName === flag)).toBe(true);
    expect(events.map(({ type, data, preData, project, environment }) => ({ type, data, preData, project, environment }))).toEqual(
      recorded.events.map(({ type, data, preData, project, environment }) => ({ type, data, preData, project, environment })),
    );
  });

  it('refuses an unknown, archived or other-project flag, and another flag’s link', async () => {
    const missing = await call('POST', `${P}/links-ghost/link`, { body: { url: 'https://x.com' } });
    expect(missing.status).toBe(recorded.missingFeature.status);
    const answer = await errorOf(missing);
    expect(answer.name).toBe(recorded.missingFeature.answer.name);
    expect(answer.message).toBe('Could not find feature with name links-ghost');

    const archived = unique('links-archived');
    await createFeature(archived);
    expect((await call('POST', `${P}/${archived}/link`, { body: { url: 'https://a.com' } })).status).toBe(204);
    const [link] = await linksOf(archived);
    expect((await call('DELETE', `${P}/${archived}`)).status).toBe(202);
    await expectError(await call('POST', `${P}/${archived}/link`, { body: { url: 'https://b.com' } }), 404, 'NotFoundError');
    await expectError(await call('PUT', `${P}/${archived}/link/${link!.id}`, { body: { url: 'https://b.com' } }), 404, 'NotFoundError');
    await expectError(await call('DELETE', `${P}/${archived}/link/${link!.id}`), 404, 'NotFoundError');
    expect(await linkCount(archived)).toBe(1);
    // Deleting the archived flag deletes its links.
    expect((await call('DELETE', `/api/admin/archive/${archived}`)).status).toBe(200);
    expect(await linkCount(archived)).toBe(0);

    const owner = unique('links-owner');
    const other = unique('links-other');
    await createFeature(owner);
    await createFeature(other);
    expect((await call('POST', `${P}/${owner}/link`, { body: { url: 'https://o.com' } })).status).toBe(204);
    const [owned] = await linksOf(owner);
    // 8.2.0 would move (PUT) or delete another flag's link through this path; we refuse it.
    await expectError(await call('PUT', `${P}/${other}/link/${owned!.id}`, { body: { url: 'https://b.com' } }), 404, 'NotFoundError');
    await expectError(await call('DELETE', `${P}/${other}/link/${owned!.id}`), 404, 'NotFoundError');
    expect(await linksOf(owner)).toEqual([owned]);

    await call('POST', '/api/admin/projects', { body: { id: 'links-proj', name: 'links-proj' } });
    await expectError(
      await call('POST', `/api/admin/projects/links-proj/features/${owner}/link`, { body: { url: 'https://p.com' } }),
      404,
      'NotFoundError',
    );
    expect(await linkCount(owner)).toBe(1);
  });

  it('needs UPDATE_FEATURE in the project: a viewer and SDK keys are refused, nothing written', async () => {
    const flag = unique('links-perm');
    await createFeature(flag);
    expect((await call('POST', `${P}/${flag}/link`, { body: { url: 'https://keep.com' } })).status).toBe(204);
    const [link] = await linksOf(flag);
    const viewer = await signedInUser(3);
    const client = await createToken({ tokenName: unique('links-client'), type: 'client', environment: 'development', projects: ['*'] });
    const first = await maxEventId();
    for (const options of [withSession(viewer.cookie), { token: client }]) {
      const refused = [
        await call('POST', `${P}/${flag}/link`, { ...options, body: { url: 'https://no.com' } }),
        await call('PUT', `${P}/${flag}/link/${link!.id}`, { ...options, body: { url: 'https://no.com' } }),
        await call('DELETE', `${P}/${flag}/link/${link!.id}`, options),
      ];
      for (const response of refused) expect(response.status).toBe(403);
    }
    expect(await call('POST', `${P}/${flag}/link`, { token: null, body: { url: 'https://no.com' } })).toHaveProperty('status', 401);
    expect(await linksOf(flag)).toEqual([link]);
    expect((await eventsSince(first)).length).toBe(0);
  });
});
