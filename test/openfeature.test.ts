/**
 * The OpenFeature provider (src/binding/openfeature.ts) on the official server SDK, over the
 * real service binding (`exports.UnleashFlags`, the loopback binding to our entrypoint): each
 * type, each reason, a flag not found, a type mismatch, and the context mapping.
 */
import { OpenFeature, ErrorCode, StandardResolutionReasons } from '@openfeature/server-sdk';
import { exports } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { UnleashBindingProvider, unleashContextOf } from '../src/binding/openfeature';
import type { UnleashFlagsApi } from '../src/binding/types';
import { call, createToken } from './support/http';
import { unique } from './support/names';
import { seedFlag, seedProject, type SeedStrategy } from './support/sdk-seed';

const binding = () => exports.UnleashFlags as unknown as UnleashFlagsApi;

function variant(name: string, payload?: { type: string; value: string }) {
  return { name, weight: 1000, weightType: 'variable', stickiness: 'default', ...(payload ? { payload } : {}) };
}

let project: string;
let backendKey: string;
let frontendKey: string;
const flag = (name: string) => `${project}.${name}`;

async function clientFor(key: string) {
  const domain = unique('of');
  await OpenFeature.setProviderAndWait(domain, new UnleashBindingProvider(binding(), key));
  return OpenFeature.getClient(domain);
}

beforeAll(async () => {
  project = unique('of-p');
  await seedProject(project);
  const on = (variants: unknown[] = [], strategies: SeedStrategy[] = [{ name: 'default' }]) => ({
    development: { enabled: true, strategies, variants },
  });
  await seedFlag({ name: flag('plain'), project, impressionData: true, environments: on() });
  await seedFlag({ name: flag('off'), project, environments: { development: { enabled: false, strategies: [{ name: 'default' }] } } });
  await seedFlag({ name: flag('users'), project, environments: on([], [{ name: 'userWithId', parameters: { userIds: '42' } }]) });
  await seedFlag({
    name: flag('region'),
    project,
    environments: on([], [{ name: 'default', constraints: [{ contextName: 'region', operator: 'IN', values: ['eu'] }] }]),
  });
  await seedFlag({ name: flag('named'), project, environments: on([variant('blue')]) });
  await seedFlag({ name: flag('number'), project, environments: on([variant('n', { type: 'number', value: '42.5' })]) });
  await seedFlag({ name: flag('json'), project, environments: on([variant('j', { type: 'json', value: '{"limit":3,"tags":["a"]}' })]) });
  await seedFlag({ name: flag('text'), project, environments: on([variant('t', { type: 'string', value: 'hello' })]) });
  backendKey = await createToken({ tokenName: unique('of-backend'), type: 'backend', environment: 'development', projects: [project] });
  frontendKey = await createToken({ tokenName: unique('of-frontend'), type: 'frontend', environment: 'development', projects: [project] });
});

describe('UnleashBindingProvider', () => {
  it('resolves a boolean: on is TARGETING_MATCH, off is DISABLED', async () => {
    const client = await clientFor(backendKey);
    expect(await client.getBooleanDetails(flag('plain'), false)).toMatchObject({
      value: true,
      reason: StandardResolutionReasons.TARGETING_MATCH,
      flagMetadata: { impressionData: true },
    });
    expect(await client.getBooleanDetails(flag('off'), true)).toMatchObject({ value: false, reason: StandardResolutionReasons.DISABLED });
  });

  it('maps targetingKey to userId and other fields to properties', async () => {
    const client = await clientFor(backendKey);
    expect(await client.getBooleanValue(flag('users'), false, { targetingKey: '42' })).toBe(true);
    expect(await client.getBooleanValue(flag('users'), false, { targetingKey: '7' })).toBe(false);
    expect(await client.getBooleanValue(flag('region'), false, { targetingKey: '7', region: 'eu' })).toBe(true);
    expect(await client.getBooleanValue(flag('region'), false, { targetingKey: '7', region: 'us' })).toBe(false);
    expect(
      unleashContextOf({
        targetingKey: 'u1',
        sessionId: 's',
        plan: 'pro',
        seats: 3,
        beta: true,
        currentTime: new Date(0),
        properties: { a: 'b' },
      }),
    ).toEqual({
      userId: 'u1',
      sessionId: 's',
      currentTime: '1970-01-01T00:00:00.000Z',
      properties: { plan: 'pro', seats: '3', beta: 'true', a: 'b' },
    });
    expect(unleashContextOf({ targetingKey: 'u1', userId: 'explicit' }).userId).toBe('explicit');
  });

  it('resolves a string as the variant name; DEFAULT without a variant, DISABLED when off', async () => {
    const client = await clientFor(backendKey);
    expect(await client.getStringDetails(flag('named'), 'none')).toMatchObject({
      value: 'blue',
      variant: 'blue',
      reason: StandardResolutionReasons.TARGETING_MATCH,
    });
    expect(await client.getStringDetails(flag('plain'), 'none')).toMatchObject({
      value: 'none',
      reason: StandardResolutionReasons.DEFAULT,
    });
    expect(await client.getStringDetails(flag('off'), 'none')).toMatchObject({ value: 'none', reason: StandardResolutionReasons.DISABLED });
  });

  it('resolves a number and an object from the variant payload', async () => {
    const client = await clientFor(backendKey);
    expect(await client.getNumberDetails(flag('number'), 0)).toMatchObject({ value: 42.5, variant: 'n', reason: 'TARGETING_MATCH' });
    expect(await client.getObjectDetails(flag('json'), {})).toMatchObject({
      value: { limit: 3, tags: ['a'] },
      variant: 'j',
      reason: 'TARGETING_MATCH',
    });
    expect(await client.getNumberDetails(flag('plain'), 7)).toMatchObject({ value: 7, reason: 'DEFAULT' });
    expect(await client.getObjectDetails(flag('off'), { x: 1 })).toMatchObject({ value: { x: 1 }, reason: 'DISABLED' });
  });

  it('reports a payload of another type as TYPE_MISMATCH, with the default value', async () => {
    const client = await clientFor(backendKey);
    expect(await client.getNumberDetails(flag('text'), 1)).toMatchObject({
      value: 1,
      reason: StandardResolutionReasons.ERROR,
      errorCode: ErrorCode.TYPE_MISMATCH,
    });
    expect(await client.getObjectDetails(flag('number'), { d: 1 })).toMatchObject({
      value: { d: 1 },
      reason: StandardResolutionReasons.ERROR,
      errorCode: ErrorCode.TYPE_MISMATCH,
    });
  });

  it('reports a flag the key cannot see as FLAG_NOT_FOUND, with the default value', async () => {
    const client = await clientFor(backendKey);
    for (const name of ['no.such.flag', 'flag.of.another.project'])
      expect(await client.getBooleanDetails(name, true)).toMatchObject({
        value: true,
        reason: StandardResolutionReasons.ERROR,
        errorCode: ErrorCode.FLAG_NOT_FOUND,
      });
    // A frontend key sees only the flags that are on, as /api/frontend lists them.
    const frontend = await clientFor(frontendKey);
    expect(await frontend.getBooleanValue(flag('plain'), false)).toBe(true);
    expect(await frontend.getBooleanDetails(flag('off'), true)).toMatchObject({ value: true, errorCode: ErrorCode.FLAG_NOT_FOUND });
  });

  it('gives the default with an error once the key is revoked', async () => {
    const key = await createToken({ tokenName: unique('of-revoked'), type: 'backend', environment: 'development', projects: [project] });
    const client = await clientFor(key);
    expect(await client.getBooleanValue(flag('plain'), false)).toBe(true);
    expect((await call('DELETE', `/api/admin/api-tokens/${key}`)).status).toBe(200);
    const details = await client.getBooleanDetails(flag('plain'), false);
    expect(details).toMatchObject({ value: false, reason: StandardResolutionReasons.ERROR, errorCode: ErrorCode.GENERAL });
    expect(details.errorMessage).toMatch(/UnleashBindingUnauthorized/);
  });
});
