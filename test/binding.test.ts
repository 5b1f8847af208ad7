/**
 * The binding (src/binding/entrypoint.ts) through a real service binding: `exports.UnleashFlags`
 * is the loopback binding to the Worker's exported entrypoint, so every call here crosses
 * Workers RPC as another Worker's would (test/binding-consumer.test.ts calls it from a second
 * Worker). Its answers are held to `POST /api/frontend`'s for the same key and context.
 */
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { BINDING_INSTANCE_ID, BINDING_SDK_VERSION } from '../src/binding/usage';
import type { UnleashContext, UnleashToggles } from '../src/binding/types';
import { adminOk, createFeature } from './support/admin';
import { flags, refusal, refusedWith } from './support/binding';
import { bindingErrorKind, UnleashBindingError, unleashFlags } from '../src/binding/client';
import { storeSpecState, unrepresentable } from './support/client-specification-store';
import { rows } from './support/db';
import { bodyOf, call, createToken } from './support/http';
import { settleMetrics } from './support/metrics';
import { unique } from './support/names';
import { seededRandom } from './support/random';
import { context as randomContext, state } from './support/random-flags';
import { seedFlag, seedProject } from './support/sdk-seed';

async function frontendBody(token: string, context: UnleashContext, address: string): Promise<UnleashToggles> {
  const response = await call('POST', '/api/frontend', { token, body: { context }, headers: { 'cf-connecting-ip': address } });
  expect(response.status).toBe(200);
  return bodyOf<UnleashToggles>(response);
}

describe('the binding answers what POST /api/frontend answers', () => {
  it('for 1,000 seeded random contexts over the differential test flag sets', async () => {
    const token = await createToken({ tokenName: unique('binding-diff'), type: 'frontend', environment: 'development' });
    const scoped = flags().withKey(token);
    const tally = { contexts: 0, toggles: 0, variants: new Set<string>() };
    for (let seed = 1; seed <= 5; seed++) {
      const { features, segments } = state(seed);
      // A strategy naming a segment twice, or a flag a parent twice, means it once: the
      // tables hold it once (the first dependency on a parent is the one kept).
      const stored = features.map((feature) => ({
        ...feature,
        strategies: feature.strategies?.map((strategy) =>
          strategy.segments ? { ...strategy, segments: [...new Set(strategy.segments)] } : strategy,
        ),
        dependencies: feature.dependencies?.filter(
          (dependency, index, all) => all.findIndex((other) => other.feature === dependency.feature) === index,
        ),
      }));
      await storeSpecState(stored, segments, unrepresentable(stored, segments));
      const random = seededRandom(seed * 7919);
      for (let n = 0; n < 200; n++) {
        const context: UnleashContext = { ...randomContext(random) } as UnleashContext;
        // What the HTTP caller's address fills in, the binding's caller passes; a session id
        // given to both (a missing one is a fresh random one on each side).
        const address = `10.9.${seed}.${n % 250}`;
        context.remoteAddress ||= address;
        context.sessionId ||= `session-${seed}-${n}`;
        // Random rollouts: one number held for both answers (the binding runs in this isolate).
        const held = random();
        vi.spyOn(Math, 'random').mockImplementation(() => held);
        const expected = await frontendBody(token, context, address);
        const actual = await scoped.getAll(context);
        const single = await Promise.all(expected.toggles.slice(0, 3).map((toggle) => scoped.getVariant(toggle.name, context)));
        vi.restoreAllMocks();
        if (JSON.stringify(actual) !== JSON.stringify(expected))
          expect(JSON.stringify(actual), `seed ${seed}, context ${n}: ${JSON.stringify(context)}`).toBe(JSON.stringify(expected));
        expect(single.map((variant) => JSON.stringify(variant))).toEqual(
          expected.toggles.slice(0, 3).map((toggle) => JSON.stringify(toggle.variant)),
        );
        tally.contexts++;
        tally.toggles += expected.toggles.length;
        for (const toggle of expected.toggles) tally.variants.add(toggle.variant.name);
      }
    }
    // Not vacuous: many flags on, many variants.
    expect(tally.contexts).toBe(1000);
    expect(tally.toggles).toBeGreaterThan(5000);
    expect(tally.variants.size).toBeGreaterThan(30);
  }, 300_000);
});

describe('UnleashFlags.withKey', () => {
  let project: string;
  let other: string;
  let frontendKey: string;
  let clientKey: string;

  beforeAll(async () => {
    project = unique('bind-a');
    other = unique('bind-b');
    await seedProject(project);
    await seedProject(other);
    await seedFlag({
      name: `${project}.on`,
      project,
      impressionData: true,
      environments: {
        development: {
          enabled: true,
          strategies: [{ name: 'default' }],
          variants: [
            { name: 'blue', weight: 1000, weightType: 'variable', stickiness: 'default', payload: { type: 'json', value: '{"a":1}' } },
          ],
        },
      },
    });
    await seedFlag({
      name: `${project}.users`,
      project,
      environments: { development: { enabled: true, strategies: [{ name: 'userWithId', parameters: { userIds: '42' } }] } },
    });
    await seedFlag({
      name: `${project}.off`,
      project,
      environments: { development: { enabled: false, strategies: [{ name: 'default' }] } },
    });
    await seedFlag({
      name: `${other}.on`,
      project: other,
      environments: { development: { enabled: true, strategies: [{ name: 'default' }] } },
    });
    await seedFlag({
      name: `${project}.address`,
      project,
      environments: { development: { enabled: true, strategies: [{ name: 'remoteAddress', parameters: { IPs: '10.1.2.3' } }] } },
    });
    await seedFlag({
      name: `${project}.no-address`,
      project,
      environments: {
        development: {
          enabled: true,
          strategies: [{ name: 'default', constraints: [{ contextName: 'remoteAddress', operator: 'NOT_IN', values: ['10.1.2.3'] }] }],
        },
      },
    });
    frontendKey = await createToken({ tokenName: unique('bind-fe'), type: 'frontend', environment: 'development', projects: [project] });
    clientKey = await createToken({ tokenName: unique('bind-client'), type: 'client', environment: 'development', projects: [project] });
  });

  it('answers isEnabled, getVariant and evaluate for a context', async () => {
    const scoped = flags().withKey(frontendKey);
    expect(await scoped.isEnabled(`${project}.users`, { userId: '42' })).toBe(true);
    expect(await scoped.isEnabled(`${project}.users`, { userId: '7' })).toBe(false);
    expect(await scoped.getVariant(`${project}.on`)).toEqual({
      name: 'blue',
      payload: { type: 'json', value: '{"a":1}' },
      enabled: true,
      feature_enabled: true,
      featureEnabled: true,
    });
    expect(await scoped.getVariant(`${project}.off`)).toEqual({
      name: 'disabled',
      enabled: false,
      feature_enabled: false,
      featureEnabled: false,
    });
    expect(await scoped.evaluate(`${project}.on`, { userId: '1' })).toMatchObject({ enabled: true, impressionData: true, found: true });
    // The same answers with the key as the first argument (one RPC call, no stub).
    expect(await flags().isEnabled(frontendKey, `${project}.users`, { userId: '42' })).toBe(true);
    expect(await flags().isEnabled(frontendKey, `${project}.users`, { userId: '7' })).toBe(false);
    expect(await flags().getVariant(frontendKey, `${project}.on`)).toEqual(await scoped.getVariant(`${project}.on`));
    expect(await flags().getAll(frontendKey, { userId: '42' })).toEqual(await scoped.getAll({ userId: '42' }));
    expect(await flags().evaluate(frontendKey, `${project}.on`)).toEqual(await scoped.evaluate(`${project}.on`));
  });

  it('tells a client key a flag that is off from one that does not exist; a frontend key cannot tell them apart', async () => {
    const client = flags().withKey(clientKey);
    const frontend = flags().withKey(frontendKey);
    expect(await client.evaluate(`${project}.off`)).toMatchObject({ enabled: false, found: true });
    expect(await client.evaluate('no.such.flag')).toMatchObject({ enabled: false, found: false, impressionData: false });
    expect(await frontend.evaluate(`${project}.off`)).toEqual(
      await frontend.evaluate('no.such.flag').then((answer) => ({ ...answer, name: `${project}.off` })),
    );
  });

  it('never shows a key of project A the flags of project B', async () => {
    for (const key of [frontendKey, clientKey]) {
      const scoped = flags().withKey(key);
      const all = await scoped.getAll({ userId: '42' });
      expect(all.toggles.map((toggle) => toggle.name).sort()).toEqual([`${project}.no-address`, `${project}.on`, `${project}.users`]);
      expect(await scoped.isEnabled(`${other}.on`)).toBe(false);
      expect(await scoped.evaluate(`${other}.on`)).toMatchObject({ enabled: false, found: false, impressionData: false });
    }
    // The same flag through a key of project B is on: the scope, not the flag, hid it.
    const otherKey = await createToken({ tokenName: unique('bind-fe-b'), type: 'frontend', environment: 'development', projects: [other] });
    expect(await flags().withKey(otherKey).isEnabled(`${other}.on`)).toBe(true);
  });

  it('sees a flag toggled through the admin API on the very next call', async () => {
    const name = unique('bind.toggle');
    await createFeature(name);
    await adminOk('POST', `/api/admin/projects/default/features/${name}/environments/development/strategies`, { name: 'default' });
    const key = await createToken({ tokenName: unique('bind-toggle'), type: 'frontend', environment: 'development' });
    const scoped = flags().withKey(key);
    expect(await scoped.isEnabled(name)).toBe(false);
    await adminOk('POST', `/api/admin/projects/default/features/${name}/environments/development/on`);
    expect(await scoped.isEnabled(name)).toBe(true);
    await adminOk('POST', `/api/admin/projects/default/features/${name}/environments/development/off`);
    expect(await scoped.isEnabled(name)).toBe(false);
  });

  it('refuses a revoked key, also through a stub handed out before the revocation', async () => {
    const key = await createToken({ tokenName: unique('bind-revoke'), type: 'frontend', environment: 'development' });
    const scoped = await flags().withKey(key);
    expect(await scoped.getAll()).toMatchObject({ toggles: expect.any(Array) });
    const revoke = await call('DELETE', `/api/admin/api-tokens/${key}`);
    expect(revoke.status).toBe(200);
    expect(await refusal(scoped.getAll())).toMatch(/UnleashBindingUnauthorized/);
    expect(await refusal(flags().withKey(key))).toMatch(/UnleashBindingUnauthorized/);
    expect(await refusal(flags().getAll(key))).toMatch(/UnleashBindingUnauthorized/);
  });

  it('refuses unknown and malformed keys, and admin keys', async () => {
    expect(await refusal(flags().withKey('default:development.not-a-key'))).toMatch(/UnleashBindingUnauthorized/);
    expect(await refusal(flags().withKey(''))).toMatch(/UnleashBindingUnauthorized/);
    expect(await refusal(flags().withKey('x'.repeat(2000)))).toMatch(/UnleashBindingUnauthorized/);
    expect(await refusal(flags().withKey('*:*.test-admin-token'))).toMatch(/UnleashBindingForbidden/);
    expect(await refusal(flags().isEnabled('*:*.test-admin-token', 'x'))).toMatch(/UnleashBindingForbidden/);
    expect(await refusal(flags().evaluate('default:development.not-a-key', 'x'))).toMatch(/UnleashBindingUnauthorized/);
  });

  it('evaluates a context without remoteAddress without one, where HTTP would take the caller address', async () => {
    const scoped = flags().withKey(clientKey);
    // No address: the remoteAddress strategy matches nothing; a NOT_IN constraint on it holds.
    expect(await scoped.isEnabled(`${project}.address`, { userId: '1' })).toBe(false);
    expect(await scoped.isEnabled(`${project}.no-address`, { userId: '1' })).toBe(true);
    // Given, it is evaluated as given.
    expect(await scoped.isEnabled(`${project}.address`, { userId: '1', remoteAddress: '10.1.2.3' })).toBe(true);
    expect(await scoped.isEnabled(`${project}.no-address`, { userId: '1', remoteAddress: '10.1.2.3' })).toBe(false);
    // HTTP from that address answers as the binding given it, not as the binding without it.
    const overHttp = await call('POST', '/api/frontend', {
      token: frontendKey,
      body: { context: { userId: '1' } },
      headers: { 'cf-connecting-ip': '10.1.2.3' },
    });
    const listed = ((await bodyOf(overHttp)) as UnleashToggles).toggles.map((toggle) => toggle.name);
    expect(listed).toContain(`${project}.address`);
    expect(listed).not.toContain(`${project}.no-address`);
  });

  it('refusals carry a stable kind over RPC, and the helper rethrows them typed', async () => {
    // What crosses Workers RPC: a plain Error (the class does not), with its message and its own `kind`.
    expect(await refusedWith(flags().isEnabled('default:development.not-a-key', 'x'))).toEqual({
      name: 'Error',
      kind: 'unauthorized',
      message: 'UnleashBindingUnauthorized: the key is unknown, revoked or expired',
    });
    expect(await refusedWith(flags().withKey('*:*.test-admin-token'))).toEqual({
      name: 'Error',
      kind: 'forbidden',
      message: 'UnleashBindingForbidden: admin keys cannot read flags through the binding',
    });
    expect(await refusedWith(flags().evaluate(clientKey, 42 as unknown as string))).toEqual({
      name: 'Error',
      kind: 'invalid',
      message: 'UnleashBindingInvalid: a flag name is a string',
    });
    // The caller's helper: an UnleashBindingError whose kind the caller branches on.
    for (const [key, kind] of [
      ['default:development.not-a-key', 'unauthorized'],
      ['*:*.test-admin-token', 'forbidden'],
    ] as const) {
      const helper = unleashFlags(flags(), key);
      for (const attempt of [
        () => helper.isEnabled('x'),
        () => helper.getVariant('x'),
        () => helper.getAll(),
        () => helper.evaluate('x'),
      ]) {
        const error = await attempt().then(
          () => null,
          (thrown: unknown) => thrown,
        );
        expect(error).toBeInstanceOf(UnleashBindingError);
        expect((error as UnleashBindingError).kind).toBe(kind);
        expect(bindingErrorKind(error)).toBe(kind);
      }
    }
    // A kind is read from the message too (a caller that gets the error through another hop).
    expect(bindingErrorKind(new Error('UnleashBindingForbidden: no'))).toBe('forbidden');
    expect(bindingErrorKind(new Error('something else'))).toBeNull();
    // An answer is not a refusal.
    expect(await unleashFlags(flags(), clientKey).isEnabled(`${project}.on`)).toBe(true);
  });

  it('counts usage into the SDK metrics under the context appName', async () => {
    const appName = unique('bind-app');
    const scoped = flags().withKey(clientKey);
    await scoped.isEnabled(`${project}.on`, { appName });
    await scoped.isEnabled(`${project}.off`, { appName });
    await scoped.getVariant(`${project}.on`, { appName });
    // Flags out of scope are not counted.
    await scoped.isEnabled(`${other}.on`, { appName });
    await settleMetrics();
    const counts = await rows<{ feature_name: string; yes: number; no: number }>(
      'SELECT feature_name, yes, no FROM client_metrics_env WHERE app_name = ? ORDER BY feature_name',
      appName,
    );
    expect(counts).toEqual([
      { feature_name: `${project}.off`, yes: 0, no: 1 },
      { feature_name: `${project}.on`, yes: 2, no: 0 },
    ]);
    const instances = await rows<{ instance_id: string; sdk_version: string }>(
      'SELECT instance_id, sdk_version FROM client_instances WHERE app_name = ?',
      appName,
    );
    expect(instances).toEqual([{ instance_id: BINDING_INSTANCE_ID, sdk_version: BINDING_SDK_VERSION }]);
  });
});
