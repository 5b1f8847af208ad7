import { authenticated, route, type Route } from '../../http/route';
import { empty, json } from '../../http/responses';
import { jobLocation } from './jobs';
import * as requests from './requests';
import {
  ExportSchema,
  ImportSchema,
  ImportToggles202Response,
  GetImportJobResponse,
  CancelImportJobResponse,
  ValidateImportResponse,
  ExportFeaturesResponse,
} from './schema';

/** Room for the 100,000 feature names the export schema allows. */
const EXPORT_MAX_BODY_BYTES = 4 * 1024 * 1024;

export const routes: Route[] = [
  route({
    method: 'POST',
    path: '/api/admin/features-batch/import',
    access: authenticated(),
    tag: 'Import/Export',
    operationId: 'importToggles',
    summary: 'Import feature flags, with their strategies, tags and segments',
    responses: { 200: { description: 'Success', schema: null }, 202: { description: 'Accepted', schema: ImportToggles202Response } },
    errors: [400, 401, 403, 404, 413, 415],
    // The body is read as a stream by the request itself (requests.ts), not by the router;
    // declared here for the document only.
    body: ImportSchema,
    bodyReadByHandler: true,
    handler: async ({ request, env, principal }) => {
      const queued = await requests.importFeatures(env, request, principal);
      return queued === undefined ? empty(200) : json(queued.job, 202, { location: jobLocation(queued.id) });
    },
  }),
  route({
    method: 'GET',
    path: '/api/admin/features-batch/import/jobs/:id',
    access: authenticated(),
    tag: 'Import/Export',
    operationId: 'getImportJob',
    summary: "Get a queued import's progress",
    responses: { 200: { description: 'Success', schema: GetImportJobResponse } },
    errors: [400, 401, 404],
    handler: async ({ env, params }) => json(await requests.getJob(env, params.id)),
  }),
  route({
    method: 'DELETE',
    path: '/api/admin/features-batch/import/jobs/:id',
    access: authenticated(),
    tag: 'Import/Export',
    operationId: 'cancelImportJob',
    summary: 'Cancel a queued import',
    responses: { 200: { description: 'Success', schema: CancelImportJobResponse } },
    errors: [400, 401, 404, 409],
    // Cancels a queued or running job (see requests.ts); test/import-jobs.test.ts calls this
    // handler as the router does, with a caller built in the test.
    handler: async ({ env, principal, params }) => json(await requests.cancelJob(env, params.id, principal)),
  }),
  route({
    method: 'POST',
    path: '/api/admin/features-batch/validate',
    access: authenticated(),
    tag: 'Import/Export',
    operationId: 'validateImport',
    summary: 'Check an import without applying it',
    responses: { 200: { description: 'Success', schema: ValidateImportResponse } },
    errors: [400, 404],
    // Not one of the seed's operations: its 400s are named as 6.10.1 and 8.2.0 name them (the
    // import itself keeps the seed's `ValidationError`).
    badRequestName: 'BadDataError',
    // Read as a stream by requests.ts, as the import is; declared for the document only.
    body: ImportSchema,
    bodyReadByHandler: true,
    handler: async ({ request, env, principal }) => json(await requests.validateImport(env, request, principal)),
  }),
  route({
    method: 'POST',
    path: '/api/admin/features-batch/export',
    access: authenticated(),
    tag: 'Import/Export',
    operationId: 'exportFeatures',
    summary: 'Export feature flags in the import format',
    body: ExportSchema,
    maxBodyBytes: EXPORT_MAX_BODY_BYTES,
    // As the validate route: 6.10.1's and 8.2.0's name for its 400s.
    badRequestName: 'BadDataError',
    responses: { 200: { description: 'Success', schema: ExportFeaturesResponse } },
    errors: [400, 401, 403, 404, 415],
    handler: async ({ env, body }) => json(await requests.exportData(env, body)),
  }),
];
