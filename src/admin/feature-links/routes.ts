/** Flag links (Unleash 7.0+): add, change and remove a flag's links; the flag read lists them. */
import { UPDATE_FEATURE } from '../../auth/permissions';
import { getDb } from '../../db/client';
import { empty } from '../../http/responses';
import { admin, route, type Route } from '../../http/route';
import { LinkSchema } from './schema';
import * as service from './service';

const inProject = admin(UPDATE_FEATURE, ({ params }) => ({ project: params.projectId }));

export const routes: Route[] = [
  route({
    method: 'POST',
    path: '/api/admin/projects/:projectId/features/:featureName/link',
    badRequestName: 'BadDataError',
    access: inProject,
    tag: 'Features',
    operationId: 'createFeatureLink',
    summary: 'Create a feature link',
    body: LinkSchema,
    responses: { 204: { description: 'This response has no body.', schema: null } },
    errors: [400, 403, 404, 413, 415],
    handler: async ({ env, principal, params, body }) => {
      await service.addLink(getDb(env), principal, params.projectId, params.featureName, body, 'title' in body);
      return empty(204);
    },
  }),
  route({
    method: 'PUT',
    path: '/api/admin/projects/:projectId/features/:featureName/link/:linkId',
    badRequestName: 'BadDataError',
    access: inProject,
    tag: 'Features',
    operationId: 'updateFeatureLink',
    summary: 'Update a feature link',
    body: LinkSchema,
    responses: { 204: { description: 'This response has no body.', schema: null } },
    errors: [400, 403, 404, 409, 413, 415],
    handler: async ({ env, principal, params, body }) => {
      await service.updateLink(getDb(env), principal, params.projectId, params.featureName, params.linkId, body);
      return empty(204);
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/admin/projects/:projectId/features/:featureName/link/:linkId',
    badRequestName: 'BadDataError',
    access: inProject,
    tag: 'Features',
    operationId: 'deleteFeatureLink',
    summary: 'Delete a feature link',
    responses: { 204: { description: 'This response has no body.', schema: null } },
    errors: [404],
    handler: async ({ env, principal, params }) => {
      await service.removeLink(getDb(env), principal, params.projectId, params.featureName, params.linkId);
      return empty(204);
    },
  }),
];
