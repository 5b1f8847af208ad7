/**
 * Writes authenticated by the session cookie are accepted only from the service's own pages
 * (same-origin `Origin`, or `Sec-Fetch-Site: same-origin|none`); forged requests from other
 * origins, sibling subdomains included, get 403 and change nothing. Keys and personal access
 * tokens in `Authorization` are not concerned.
 */
import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { env, exports } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import worker from '../src/index';
import { createPersonalToken, createUser, signedInUser, STRONG_PASSWORD } from './support/auth';
import { ADMIN_TOKEN, BASE, bodyOf, call, expectError } from './support/http';

const P = '/api/admin/projects/default/features';
const EVIL = 'http://evil.example';

let admin: { id: number; cookie: string };

beforeAll(async () => {
  admin = await signedInUser(1);
});

/** A request as a browser would send it, with exactly these headers (no helper adds any). */
function raw(method: string, path: string, headers: Record<string, string>, body?: string, base = BASE): Promise<Response> {
  return exports.default.fetch(new Request(`${base}${path}`, { method, headers, body, redirect: 'manual' }));
}

async function newFlag(): Promise<string> {
  const name = `csrf-${crypto.randomUUID().slice(0, 8)}`;
  expect((await call('POST', P, { body: { name } })).status).toBe(201);
  return name;
}

async function enabledIn(name: string, environment: string): Promise<boolean> {
  const feature = await bodyOf<{ environments: { name: string; enabled: boolean }[] }>(await call('GET', `${P}/${name}`));
  return feature.environments.find((entry) => entry.name === environment)!.enabled;
}

async function eventCount(name: string): Promise<number> {
  return (await env.DB.prepare('SELECT count(*) AS n FROM events WHERE feature_name = ?').bind(name).first<number>('n'))!;
}

describe('cookie-authenticated writes from another origin', () => {
  it('the forged body-less text/plain POST that turns a flag on: 403, the flag stays off, no event', async () => {
    const name = await newFlag();
    const events = await eventCount(name);
    const response = await raw('POST', `${P}/${name}/environments/development/on`, {
      cookie: admin.cookie,
      origin: EVIL,
      'sec-fetch-site': 'cross-site',
      'content-type': 'text/plain',
    });
    const body = await expectError(response, 403, 'NoAccessError');
    expect(body.message).toContain('same-origin Origin header');
    expect(await enabledIn(name, 'development')).toBe(false);
    expect(await eventCount(name)).toBe(events);
  });

  it('a page on a sibling subdomain (same site, so the Lax cookie goes along) is refused too', async () => {
    const name = await newFlag();
    const response = await raw(
      'POST',
      `${P}/${name}/environments/development/on`,
      { cookie: admin.cookie, origin: 'https://evil.flags.example.com', 'sec-fetch-site': 'same-site' },
      undefined,
      'https://unleash.flags.example.com',
    );
    await expectError(response, 403, 'NoAccessError');
    expect(await enabledIn(name, 'development')).toBe(false);
  });

  it('refuses a write with neither Origin nor Sec-Fetch-Site, and Origin: null', async () => {
    const name = await newFlag();
    await expectError(await raw('POST', `${P}/${name}/environments/development/on`, { cookie: admin.cookie }), 403, 'NoAccessError');
    await expectError(
      await raw('POST', `${P}/${name}/environments/development/on`, { cookie: admin.cookie, origin: 'null' }),
      403,
      'NoAccessError',
    );
    expect(await enabledIn(name, 'development')).toBe(false);
  });

  it('an Origin that differs only in port or scheme is another origin', async () => {
    const name = await newFlag();
    for (const origin of ['http://localhost:8080', 'https://localhost']) {
      await expectError(
        await raw('POST', `${P}/${name}/environments/development/on`, { cookie: admin.cookie, origin }),
        403,
        'NoAccessError',
      );
    }
  });

  it('a mismatching Origin is refused even when Sec-Fetch-Site claims same-origin', async () => {
    const name = await newFlag();
    await expectError(
      await raw('POST', `${P}/${name}/environments/development/on`, {
        cookie: admin.cookie,
        origin: EVIL,
        'sec-fetch-site': 'same-origin',
      }),
      403,
      'NoAccessError',
    );
  });

  it('PUT, PATCH and DELETE are checked as POST is', async () => {
    const name = await newFlag();
    const headers = { cookie: admin.cookie, origin: EVIL, 'content-type': 'application/json' };
    await expectError(await raw('PUT', `${P}/${name}`, headers, JSON.stringify({ description: 'forged' })), 403, 'NoAccessError');
    await expectError(
      await raw('PATCH', `${P}/${name}`, headers, JSON.stringify([{ op: 'replace', path: '/stale', value: true }])),
      403,
      'NoAccessError',
    );
    await expectError(await raw('DELETE', `${P}/${name}`, headers), 403, 'NoAccessError');
    const feature = await bodyOf(await call('GET', `${P}/${name}`));
    expect(feature).toMatchObject({ description: null, stale: false, archived: false });
  });

  it('favourites: a forged POST adds nothing', async () => {
    const name = await newFlag();
    await expectError(await raw('POST', `${P}/${name}/favorites`, { cookie: admin.cookie, origin: EVIL }), 403, 'NoAccessError');
    const favourites = await env.DB.prepare('SELECT count(*) AS n FROM favorite_features WHERE feature = ? AND user_id = ?')
      .bind(name, admin.id)
      .first<number>('n');
    expect(favourites).toBe(0);
  });

  it('/logout: a forged POST signs nobody out', async () => {
    const person = await signedInUser(3);
    await expectError(await raw('POST', '/logout', { cookie: person.cookie, origin: EVIL }), 403, 'NoAccessError');
    expect((await raw('GET', '/api/admin/user', { cookie: person.cookie })).status).toBe(200);
    const response = await raw('POST', '/logout', { cookie: person.cookie, origin: BASE });
    expect(response.status).toBe(302);
    expect((await raw('GET', '/api/admin/user', { cookie: person.cookie })).status).toBe(401);
  });

  it('reads are not concerned: GET from another origin answers as before', async () => {
    const response = await raw('GET', '/api/admin/user', { cookie: admin.cookie, origin: EVIL, 'sec-fetch-site': 'cross-site' });
    expect(response.status).toBe(200);
  });
});

describe('cookie-authenticated writes from our own pages', () => {
  it('a same-origin Origin passes', async () => {
    const name = await newFlag();
    const response = await raw('POST', `${P}/${name}/environments/development/on`, {
      cookie: admin.cookie,
      origin: BASE,
      'sec-fetch-site': 'same-origin',
    });
    expect(response.status).toBe(200);
    expect(await enabledIn(name, 'development')).toBe(true);
  });

  it('without Origin, Sec-Fetch-Site same-origin or none passes', async () => {
    const name = await newFlag();
    expect(
      (await raw('POST', `${P}/${name}/environments/development/on`, { cookie: admin.cookie, 'sec-fetch-site': 'same-origin' })).status,
    ).toBe(200);
    expect(
      (await raw('POST', `${P}/${name}/environments/development/off`, { cookie: admin.cookie, 'sec-fetch-site': 'none' })).status,
    ).toBe(200);
  });

  it("UNLEASH_URL's origin counts as ours (a proxy in front changes the host the Worker sees)", async () => {
    const name = await newFlag();
    const ctx = createExecutionContext();
    const response = await worker.fetch(
      new Request(`http://internal.worker${P}/${name}/environments/development/on`, {
        method: 'POST',
        headers: { cookie: admin.cookie, origin: 'https://flags.example.com' },
      }),
      { ...env, UNLEASH_URL: 'https://flags.example.com/unleash' },
      ctx,
    );
    await waitOnExecutionContext(ctx);
    expect(response.status).toBe(200);
    expect(await enabledIn(name, 'development')).toBe(true);
  });
});

describe('credentials in Authorization are not concerned', () => {
  it('an admin key and a personal access token write from any origin', async () => {
    const name = await newFlag();
    const key = await raw('POST', `${P}/${name}/environments/development/on`, { authorization: ADMIN_TOKEN, origin: EVIL });
    expect(key.status).toBe(200);
    const pat = await createPersonalToken(admin.cookie);
    const viaPat = await raw('POST', `${P}/${name}/environments/development/off`, {
      authorization: pat,
      cookie: admin.cookie,
      origin: EVIL,
      'sec-fetch-site': 'cross-site',
    });
    expect(viaPat.status).toBe(200);
    expect(await enabledIn(name, 'development')).toBe(false);
  });
});

describe('sign-in posted by another site (login CSRF)', () => {
  const login = (username: string, headers: Record<string, string>) =>
    raw(
      'POST',
      '/auth/simple/login',
      { 'content-type': 'application/json', ...headers },
      JSON.stringify({ username, password: STRONG_PASSWORD }),
    );
  const sessionsOf = async (userId: number) =>
    (await env.DB.prepare('SELECT count(*) AS n FROM sessions WHERE user_id = ?').bind(userId).first<number>('n'))!;

  it('is refused from another origin or site, and opens no session', async () => {
    const user = await createUser();
    const foreign: Record<string, string>[] = [
      { origin: EVIL },
      { origin: 'null' },
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site' },
    ];
    for (const headers of foreign) {
      const refused = await expectError(await login(user.username, headers), 403, 'NoAccessError');
      expect(refused.message).toContain('Sign-in is accepted only from the pages of this service');
    }
    expect(await sessionsOf(user.id)).toBe(0);
  });

  it("is accepted from the service's own pages and from scripts (no Origin, no Sec-Fetch-Site)", async () => {
    const user = await createUser();
    const ours: Record<string, string>[] = [{ origin: new URL(BASE).origin }, { 'sec-fetch-site': 'same-origin' }, {}];
    for (const headers of ours) {
      const response = await login(user.username, headers);
      expect(response.status).toBe(200);
      expect(response.headers.get('set-cookie')).toContain('unleash-session=');
    }
    expect(await sessionsOf(user.id)).toBe(3);
  });
});
