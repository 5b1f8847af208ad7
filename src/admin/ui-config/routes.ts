/** The admin UI's configuration and splash screens: the route objects; the rules are in service.ts. */
import * as v from 'valibot';
import { ADMIN } from '../../auth/permissions';
import { getDb } from '../../db/client';
import { notFound } from '../../http/errors';
import { tooManyRequests, withinLimit, RATE_LIMIT_BUCKETS } from '../../http/rate-limit';
import { empty, json, untyped } from '../../http/responses';
import { admin, authenticated, route, type Route } from '../../http/route';
import { parseInput, text } from '../../http/validation';
import {
  GetTelemetrySettingsResponse,
  GetUiConfigResponse,
  InstanceInsightsResponse,
  LicenseCheckResponse,
  RecordUiErrorSchema,
  SetCorsSchema,
  SetUiConfigSchema,
  UpdateSplashSettingsResponse,
} from './schema';
import * as service from './service';

/** Unleash's permission for the CORS settings (held through ADMIN, or a custom root role). */
const UPDATE_CORS = 'UPDATE_CORS';

const SplashParamsSchema = v.object({ id: text(255) });

export const routes: Route[] = [
  route({
    method: 'GET',
    path: '/api/admin/ui-config',
    access: authenticated(),
    tag: 'Admin UI',
    operationId: 'getUiConfig',
    summary: 'The settings the admin UI starts with',
    responses: { 200: { description: 'Success', schema: GetUiConfigResponse } },
    errors: [401, 403],
    handler: async ({ request, env, principal }) =>
      json(await service.uiConfig(getDb(env), env, request, principal.kind === 'user' ? principal.userId : undefined)),
  }),
  // Asked on every page once the UI's Enterprise panels are on (LicenseBanner; InternalBanners
  // asks src/admin/banners): the honest answer of an instance without licence.
  route({
    method: 'GET',
    path: '/api/admin/license/check',
    access: authenticated(),
    tag: 'Admin UI',
    operationId: 'checkLicense',
    summary: 'Whether the licence is valid: no licence is needed here, so always',
    responses: { 200: { description: 'Success', schema: LicenseCheckResponse } },
    handler: () => json({ isValid: true }),
  }),
  // Pages in the Enterprise admin menu that have no flag to hide them: the honest empty answers.
  route({
    method: 'GET',
    path: '/api/admin/insights',
    access: authenticated(),
    tag: 'Admin UI',
    operationId: 'getInstanceInsights',
    summary: 'The Insights page (main menu, no switch hides it): no weekly trends are recorded here, so none',
    responses: { 200: { description: 'Success', schema: InstanceInsightsResponse } },
    handler: () => json({ userTrends: [], flagTrends: [], projectFlagTrends: [], metricsSummaryTrends: [], environmentTypeTrends: [] }),
  }),
  route({
    method: 'POST',
    path: '/api/admin/splash/:id',
    access: authenticated(),
    tag: 'Admin UI',
    operationId: 'updateSplashSettings',
    summary: 'Record that the caller has seen a splash screen',
    responses: { 200: { description: 'Success', schema: UpdateSplashSettingsResponse } },
    errors: [400],
    handler: async ({ env, principal, params }) => {
      const { id } = parseInput(SplashParamsSchema, params, '/params');
      return json(await service.markSplashSeen(getDb(env), principal.userId, id));
    },
  }),
  route({
    method: 'POST',
    path: '/api/admin/ui-config/cors',
    access: admin([ADMIN, UPDATE_CORS]),
    tag: 'Admin UI',
    operationId: 'setCors',
    summary: 'Set the origins the frontend API accepts requests from',
    body: SetCorsSchema,
    responses: { 204: { description: 'Saved, no content', schema: null } },
    errors: [400, 404, 413, 415],
    handler: async ({ env, principal, body }) => {
      await service.setFrontendOrigins(getDb(env), principal, body.frontendApiOrigins);
      return empty(204);
    },
  }),
  route({
    method: 'POST',
    path: '/api/admin/ui-config',
    access: admin(ADMIN),
    tag: 'Admin UI',
    operationId: 'setUiConfig',
    summary: "Set the UI's configuration: the frontend API's origins (use ./cors instead)",
    body: SetUiConfigSchema,
    responses: { 204: { description: 'Saved, no content', schema: null } },
    errors: [400, 404, 413, 415],
    handler: async ({ env, principal, body }) => {
      if (!body.frontendSettings) throw notFound('The requested resource could not be found');
      await service.setFrontendOrigins(getDb(env), principal, body.frontendSettings.frontendApiOrigins);
      return empty(204);
    },
  }),
  route({
    method: 'GET',
    path: '/api/admin/telemetry/settings',
    access: authenticated(),
    tag: 'Telemetry',
    operationId: 'getTelemetrySettings',
    summary: 'Whether version and feature usage information is collected',
    responses: { 200: { description: 'Success', schema: GetTelemetrySettingsResponse } },
    handler: () => json(service.telemetrySettings()),
  }),
  route({
    method: 'POST',
    path: '/api/admin/record-ui-error',
    access: authenticated(),
    tag: 'Admin UI',
    operationId: 'uiObservability',
    summary: 'Report an error the admin UI met (logged, never stored)',
    body: RecordUiErrorSchema,
    maxBodyBytes: service.UI_ERROR_MAX_BODY_BYTES,
    responses: { 204: { description: 'Logged, no content', schema: null } },
    errors: [400, 413, 415, 429],
    handler: async ({ request, env, principal, body }) => {
      if (!(await withinLimit('ui-errors', request, env))) return untyped(tooManyRequests(RATE_LIMIT_BUCKETS['ui-errors'].periodSeconds));
      service.recordUiError(principal, body);
      return empty(204);
    },
  }),
];
