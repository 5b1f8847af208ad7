import { beforeAll, describe, expect, it } from 'vitest';
import { adminOk } from './support/admin';
import { count, eventsSince, parsedEvent, rows } from './support/db';
import { bodyOf, call, createToken, expectError } from './support/http';
import { signInAs } from './support/users';

const BANNER_KEYS = ['id', 'message', 'enabled', 'variant', 'sticky', 'icon', 'link', 'linkText', 'dialogTitle', 'dialog', 'createdAt'];

let editor: string;
let viewer: string;
let bannerKeeper: string;

beforeAll(async () => {
  editor = await signInAs('Editor');
  viewer = await signInAs('Viewer');
  const role = await bodyOf<{ id: number }>(
    await adminOk('POST', '/api/admin/roles', {
      name: 'banners-keeper',
      description: 'banners only',
      type: 'root-custom',
      permissions: [{ name: 'UPDATE_INSTANCE_BANNERS' }],
    }),
  );
  bannerKeeper = await signInAs(role.id);
});

async function maxEventId(): Promise<number> {
  return count('SELECT coalesce(max(id), 0) AS n FROM events');
}

/** Everything a refusal must leave alone: the banners and the events. */
async function footprint() {
  return { banners: await rows('SELECT * FROM banners ORDER BY id'), events: await maxEventId() };
}

async function create(body: Record<string, unknown>, token?: string) {
  const response = await call('POST', '/api/admin/banners', { body, token });
  expect(response.status).toBe(201);
  const banner = await bodyOf<Record<string, unknown> & { id: number }>(response);
  expect(response.headers.get('location')).toBe(`api/admin/banners/${banner.id}`);
  return banner;
}

describe('banners: create, list, update, toggle, delete', () => {
  it('creates a banner with Unleash defaults, lists it to any signed-in caller, and records banner-created', async () => {
    const since = await maxEventId();
    const banner = await create({ message: '**Maintenance** on Sunday' });
    expect(Object.keys(banner)).toEqual(BANNER_KEYS);
    expect(banner).toMatchObject({
      message: '**Maintenance** on Sunday',
      enabled: true,
      variant: 'info',
      sticky: false,
      icon: null,
      link: null,
      linkText: null,
      dialogTitle: null,
      dialog: null,
    });
    expect(banner.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);

    for (const token of [undefined, viewer, editor]) {
      const listed = await bodyOf<{ banners: { id: number }[] }>(await call('GET', '/api/admin/banners', { token }));
      expect(listed.banners.find(({ id }) => id === banner.id)).toEqual(banner);
    }

    const events = await eventsSince(since);
    expect(events.map(({ type }) => type)).toEqual(['banner-created']);
    expect(parsedEvent(events[0]!)).toEqual({ type: 'banner-created', createdBy: 'admin', data: banner, preData: null });
  });

  it('takes every field the UI form sends, as it sends them', async () => {
    const body = {
      enabled: false,
      variant: 'warning',
      icon: 'rocket_launch',
      message: 'Read the **notes**',
      link: 'dialog',
      linkText: 'Open',
      dialogTitle: 'Release notes',
      dialog: '# Notes\n\nAll good.',
      sticky: true,
    };
    const banner = await create(body);
    const { enabled, variant, icon, message, link, linkText, dialogTitle, dialog, sticky } = body;
    expect(banner).toMatchObject({ message, enabled, variant, sticky, icon, link, linkText, dialogTitle, dialog });
    // Empty texts (the form sends "" for unused fields) and relative or absolute links are kept.
    expect(await create({ message: 'x', icon: '', link: '/admin/users', linkText: '' })).toMatchObject({
      icon: '',
      link: '/admin/users',
      linkText: '',
    });
    expect(await create({ message: 'y', link: 'https://status.example.com/incidents' })).toMatchObject({
      link: 'https://status.example.com/incidents',
    });
  });

  it('updates what the body sends (200 with the banner), keeps the rest, and records banner-updated with before and after', async () => {
    const banner = await create({ message: 'before', variant: 'error', link: '/projects', linkText: 'Projects' });
    const since = await maxEventId();
    const response = await call('PUT', `/api/admin/banners/${banner.id}`, { body: { message: 'after', sticky: true, linkText: null } });
    expect(response.status).toBe(200);
    const updated = await bodyOf(response);
    expect(updated).toEqual({ ...banner, message: 'after', sticky: true, linkText: null });
    const listed = await bodyOf<{ banners: { id: number }[] }>(await call('GET', '/api/admin/banners'));
    expect(listed.banners.find(({ id }) => id === banner.id)).toEqual(updated);
    const events = await eventsSince(since);
    expect(events.map(parsedEvent)).toEqual([{ type: 'banner-updated', createdBy: 'admin', data: updated, preData: banner }]);
  });

  it('turns a banner off and on (200 with the banner), each with banner-updated', async () => {
    const banner = await create({ message: 'toggle me' });
    const since = await maxEventId();
    const off = await call('POST', `/api/admin/banners/${banner.id}/off`);
    expect(off.status).toBe(200);
    expect(await bodyOf(off)).toEqual({ ...banner, enabled: false });
    const on = await call('POST', `/api/admin/banners/${banner.id}/on`, { token: bannerKeeper });
    expect(on.status).toBe(200);
    expect(await bodyOf(on)).toEqual(banner);
    const events = (await eventsSince(since)).map(parsedEvent);
    expect(events.map((event) => [event!.type, event!.data.enabled, event!.preData.enabled])).toEqual([
      ['banner-updated', false, true],
      ['banner-updated', true, false],
    ]);
  });

  it('answers on→on and off→off with the banner and writes nothing (as a flag environment already in that state)', async () => {
    const shown = await create({ message: 'already on' });
    const hidden = await create({ message: 'already off', enabled: false });
    const before = await footprint();
    const on = await call('POST', `/api/admin/banners/${shown.id}/on`);
    expect(on.status).toBe(200);
    expect(await bodyOf(on)).toEqual(shown);
    const off = await call('POST', `/api/admin/banners/${hidden.id}/off`, { token: bannerKeeper });
    expect(off.status).toBe(200);
    expect(await bodyOf(off)).toEqual(hidden);
    expect(await footprint()).toEqual(before);
  });

  it('deletes a banner (200, no body), which then is gone, and records banner-deleted with what it was', async () => {
    const banner = await create({ message: 'short-lived' });
    const since = await maxEventId();
    const response = await call('DELETE', `/api/admin/banners/${banner.id}`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('');
    expect(await count('SELECT count(*) AS n FROM banners WHERE id = ?', banner.id)).toBe(0);
    const events = (await eventsSince(since)).map(parsedEvent);
    expect(events).toEqual([{ type: 'banner-deleted', createdBy: 'admin', data: null, preData: banner }]);
  });

  it('lets a root-custom role with UPDATE_INSTANCE_BANNERS do every write, named in the event', async () => {
    const banner = await create({ message: 'by the keeper' }, bannerKeeper);
    expect((await call('PUT', `/api/admin/banners/${banner.id}`, { body: { message: 'edited' }, token: bannerKeeper })).status).toBe(200);
    expect((await call('DELETE', `/api/admin/banners/${banner.id}`, { token: bannerKeeper })).status).toBe(200);
    const [created] = await rows<{ created_by: string }>(
      "SELECT created_by FROM events WHERE type = 'banner-created' ORDER BY id DESC LIMIT 1",
    );
    expect(created!.created_by).not.toBe('admin');
  });
});

describe('banners: refusals write nothing', () => {
  it('refuses bad bodies with BadDataError naming the field', async () => {
    const before = await footprint();
    const bad: [Record<string, unknown>, string][] = [
      [{}, 'message'],
      [{ message: '   ' }, 'message'],
      [{ message: 42 }, 'message'],
      [{ message: 'x', variant: 'purple' }, 'variant'],
      [{ message: 'x', enabled: 'yes' }, 'enabled'],
      [{ message: 'x', sticky: 1 }, 'sticky'],
      [{ message: 'x', link: 'javascript:alert(1)' }, 'link'],
      [{ message: 'x', link: 'example.com' }, 'link'],
      [{ message: 'x'.repeat(10_001) }, 'message'],
      [{ message: 'x', dialog: ['no'] }, 'dialog'],
    ];
    for (const [body, field] of bad) {
      const error = await expectError(await call('POST', '/api/admin/banners', { body }), 400, 'BadDataError');
      expect(JSON.stringify(error.details), JSON.stringify(body)).toContain(field);
    }
    await expectError(await call('POST', '/api/admin/banners', { rawBody: '[1]' }), 400, 'BadDataError');
    await expectError(
      await call('POST', '/api/admin/banners', { rawBody: 'message=x', contentType: 'text/plain' }),
      415,
      'ContentTypeerror',
    );
    const existing = await create({ message: 'stays as it is' });
    const kept = await footprint();
    await expectError(
      await call('PUT', `/api/admin/banners/${existing.id}`, { body: { message: 'x', variant: 'nope' } }),
      400,
      'BadDataError',
    );
    await expectError(await call('PUT', `/api/admin/banners/${existing.id}`, { body: { variant: 'info' } }), 400, 'BadDataError');
    expect(await footprint()).toEqual(kept);
    expect(kept.banners.length).toBe(before.banners.length + 1);
  });

  it('refuses writes to callers without ADMIN or UPDATE_INSTANCE_BANNERS (403), tokens other than admin ones too', async () => {
    const banner = await create({ message: 'guarded' });
    const clientKey = await createToken({ tokenName: 'banners-client', type: 'client', environment: 'development', projects: ['*'] });
    const before = await footprint();
    for (const token of [editor, viewer, clientKey]) {
      await expectError(await call('POST', '/api/admin/banners', { body: { message: 'no' }, token }), 403, 'NoAccessError');
      await expectError(await call('PUT', `/api/admin/banners/${banner.id}`, { body: { message: 'no' }, token }), 403, 'NoAccessError');
      await expectError(await call('POST', `/api/admin/banners/${banner.id}/off`, { token }), 403, 'NoAccessError');
      await expectError(await call('DELETE', `/api/admin/banners/${banner.id}`, { token }), 403, 'NoAccessError');
    }
    await expectError(await call('GET', '/api/admin/banners', { token: clientKey }), 403, 'NoAccessError');
    await expectError(await call('GET', '/api/admin/banners', { token: null }), 401, 'AuthenticationRequired');
    await expectError(await call('POST', '/api/admin/banners', { body: { message: 'no' }, token: null }), 401, 'AuthenticationRequired');
    expect(await footprint()).toEqual(before);
  });

  it('answers 404 for an unknown or malformed id on every write', async () => {
    const before = await footprint();
    for (const id of ['999999', 'abc']) {
      const expected = id === 'abc' ? 400 : 404;
      const name = id === 'abc' ? 'BadDataError' : 'NotFoundError';
      const put = await expectError(await call('PUT', `/api/admin/banners/${id}`, { body: { message: 'x' } }), expected, name);
      if (expected === 404) expect(put.message).toBe(`Could not find banner with id ${id}`);
      await expectError(await call('POST', `/api/admin/banners/${id}/on`), expected, name);
      await expectError(await call('POST', `/api/admin/banners/${id}/off`), expected, name);
      await expectError(await call('DELETE', `/api/admin/banners/${id}`), expected, name);
    }
    expect(await footprint()).toEqual(before);
  });
});
