/** Message banners: the route objects; the rules are in service.ts. */
import { ADMIN, UPDATE_INSTANCE_BANNERS } from '../../auth/permissions';
import { getDb } from '../../db/client';
import { empty, json } from '../../http/responses';
import { admin, authenticated, route, type Route } from '../../http/route';
import { parseInput } from '../../http/validation';
import { BannerIdParams, BannerInputSchema, BannerSchema, BannersSchema } from './schema';
import * as service from './service';

/** Every write: an admin, or a custom root role with Unleash's banner permission. */
const canChange = admin([ADMIN, UPDATE_INSTANCE_BANNERS]);

function bannerId(params: { id: string }): number {
  return parseInput(BannerIdParams, params, '/params').id;
}

function toggle(on: boolean): Route {
  return route({
    method: 'POST',
    path: `/api/admin/banners/:id/${on ? 'on' : 'off'}`,
    badRequestName: 'BadDataError',
    access: canChange,
    tag: 'Banners',
    operationId: on ? 'enableBanner' : 'disableBanner',
    summary: on ? 'Show a banner to everyone' : 'Hide a banner (it is kept)',
    responses: { 200: { description: 'The banner', schema: BannerSchema } },
    errors: [400, 404],
    handler: async ({ env, principal, params }) => json(await service.setEnabled(getDb(env), principal, bannerId(params), on)),
  });
}

export const routes: Route[] = [
  route({
    method: 'GET',
    path: '/api/admin/banners',
    // The UI asks on every page, whoever is signed in: enabled banners are for everyone.
    access: authenticated(),
    tag: 'Banners',
    operationId: 'getBanners',
    summary: 'List every message banner, enabled or not',
    responses: { 200: { description: 'bannersSchema', schema: BannersSchema } },
    handler: async ({ env }) => json(await service.listBanners(getDb(env))),
  }),
  route({
    method: 'POST',
    path: '/api/admin/banners',
    badRequestName: 'BadDataError',
    access: canChange,
    tag: 'Banners',
    operationId: 'createBanner',
    summary: 'Create a message banner',
    body: BannerInputSchema,
    responses: { 201: { description: 'Created', schema: BannerSchema, headers: { location: 'api/admin/banners/<id>' } } },
    errors: [400, 413, 415],
    handler: async ({ env, principal, body }) => {
      const banner = await service.createBanner(getDb(env), principal, body);
      return json(banner, 201, { location: `api/admin/banners/${banner.id}` });
    },
  }),
  route({
    method: 'PUT',
    path: '/api/admin/banners/:id',
    badRequestName: 'BadDataError',
    access: canChange,
    tag: 'Banners',
    operationId: 'updateBanner',
    summary: 'Change a message banner (fields left out keep their values)',
    body: BannerInputSchema,
    responses: { 200: { description: 'The banner', schema: BannerSchema } },
    errors: [400, 404, 413, 415],
    handler: async ({ env, principal, params, body }) => json(await service.updateBanner(getDb(env), principal, bannerId(params), body)),
  }),
  route({
    method: 'DELETE',
    path: '/api/admin/banners/:id',
    badRequestName: 'BadDataError',
    access: canChange,
    tag: 'Banners',
    operationId: 'deleteBanner',
    summary: 'Delete a message banner',
    responses: { 200: { description: 'Deleted, no content', schema: null } },
    errors: [400, 404],
    handler: async ({ env, principal, params }) => {
      await service.deleteBanner(getDb(env), principal, bannerId(params));
      return empty(200);
    },
  }),
  toggle(true),
  toggle(false),
];
