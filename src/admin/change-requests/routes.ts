/**
 * Change requests (Unleash Enterprise's API, as the served UI calls it): settings per
 * environment, drafts and their changes, review, apply and schedule, titles and comments.
 * Reads are open to any admin-API caller, as the project's flags are; every write checks its
 * permission in the service, where the request's environment is known.
 */
import { PROJECT_CHANGE_REQUEST_WRITE, UPDATE_PROJECT } from '../../auth/permissions';
import { getDb } from '../../db/client';
import { empty, json } from '../../http/responses';
import { admin, authenticated, route, type Route } from '../../http/route';
import {
  ActionableAnswer,
  AddChangeBody,
  ChangeRequestAnswer,
  ChangeRequestList,
  CommentBody,
  CountAnswer,
  EditChangeBody,
  EnvironmentConfigList,
  EnvironmentConfigBody,
  ScheduledAnswer,
  ScheduledQuery,
  StateBody,
  TitleBody,
} from './schema';
import * as service from './service';
import { followSchedule } from './alarm';
import { changeState } from './states';

const BASE = '/api/admin/projects/:projectId/change-requests';
const TAG = 'Change Requests';
const ok = { 200: { description: 'Success', schema: null } } as const;

export const routes: Route[] = [
  route({
    method: 'GET',
    path: `${BASE}/config`,
    access: authenticated(),
    tag: TAG,
    operationId: 'getChangeRequestConfig',
    summary: "The project's change-request settings, per environment",
    responses: { 200: { description: 'Success', schema: EnvironmentConfigList } },
    errors: [401, 404],
    handler: async ({ env, params }) => json(await service.getConfig(getDb(env), params.projectId)),
  }),
  route({
    method: 'PUT',
    path: '/api/admin/projects/:projectId/environments/:environment/change-requests/config',
    access: admin([UPDATE_PROJECT, PROJECT_CHANGE_REQUEST_WRITE], ({ params }) => ({ project: params.projectId })),
    tag: TAG,
    operationId: 'updateChangeRequestEnvironmentConfig',
    summary: 'Turn change requests on or off in an environment, and set the approvals they need',
    body: EnvironmentConfigBody,
    responses: ok,
    errors: [400, 401, 403, 404, 415],
    handler: async ({ env, principal, params, body }) => {
      await service.setConfig(
        getDb(env),
        principal,
        params.projectId,
        params.environment,
        body.changeRequestsEnabled,
        body.requiredApprovals ?? 1,
      );
      return empty(200);
    },
  }),
  route({
    method: 'POST',
    path: '/api/admin/projects/:projectId/environments/:environment/change-requests',
    access: authenticated(),
    tag: TAG,
    operationId: 'addChangeToDraft',
    summary: "Add a change to the caller's draft change request in an environment",
    body: AddChangeBody,
    responses: { 200: { description: 'The draft', schema: ChangeRequestAnswer } },
    errors: [400, 401, 403, 404, 409, 415],
    handler: async ({ env, principal, params, body }) =>
      json(await service.addChange(getDb(env), principal, params.projectId, params.environment, body)),
  }),
  route({
    method: 'GET',
    path: BASE,
    access: authenticated(),
    tag: TAG,
    operationId: 'getChangeRequests',
    summary: "The project's change requests (drafts only their authors')",
    responses: { 200: { description: 'Success', schema: ChangeRequestList } },
    errors: [401, 404],
    handler: async ({ env, principal, params }) => json(await service.listRequests(getDb(env), principal, params.projectId)),
  }),
  route({
    method: 'GET',
    path: `${BASE}/pending`,
    access: authenticated(),
    tag: TAG,
    operationId: 'getPendingChangeRequests',
    summary: "The caller's open change requests in the project",
    responses: { 200: { description: 'Success', schema: ChangeRequestList } },
    errors: [401, 404],
    handler: async ({ env, principal, params }) => json(await service.pendingRequests(getDb(env), principal, params.projectId)),
  }),
  route({
    method: 'GET',
    path: `${BASE}/pending/:featureName`,
    access: authenticated(),
    tag: TAG,
    operationId: 'getPendingChangeRequestsForFeature',
    summary: "The project's open change requests that change a flag",
    responses: { 200: { description: 'Success', schema: ChangeRequestList } },
    errors: [401, 404],
    handler: async ({ env, principal, params }) =>
      json(await service.pendingRequests(getDb(env), principal, params.projectId, params.featureName)),
  }),
  route({
    method: 'GET',
    path: `${BASE}/actionable`,
    access: authenticated(),
    tag: TAG,
    operationId: 'getActionableChangeRequests',
    summary: 'How many change requests wait for the caller',
    responses: { 200: { description: 'Success', schema: ActionableAnswer } },
    errors: [401, 404],
    handler: async ({ env, principal, params }) => json(await service.actionable(getDb(env), principal, params.projectId)),
  }),
  route({
    method: 'GET',
    path: `${BASE}/count`,
    access: authenticated(),
    tag: TAG,
    operationId: 'getChangeRequestsCount',
    summary: "The project's change requests counted by state",
    responses: { 200: { description: 'Success', schema: CountAnswer } },
    errors: [401, 404],
    handler: async ({ env, params }) => json(await service.countRequests(getDb(env), params.projectId)),
  }),
  route({
    method: 'GET',
    path: `${BASE}/scheduled`,
    access: authenticated(),
    tag: TAG,
    operationId: 'getScheduledChangeRequests',
    summary: 'Scheduled change requests that change a strategy, or a flag’s variants',
    query: ScheduledQuery,
    responses: { 200: { description: 'Success', schema: ScheduledAnswer } },
    errors: [400, 401],
    handler: async ({ env, params, query }) => json(await service.scheduledTouching(getDb(env), params.projectId, query)),
  }),
  route({
    method: 'GET',
    path: `${BASE}/:id`,
    access: authenticated(),
    tag: TAG,
    operationId: 'getChangeRequest',
    summary: 'One change request with its changes, reviews, comments and conflicts',
    responses: { 200: { description: 'Success', schema: ChangeRequestAnswer } },
    errors: [401, 404],
    handler: async ({ env, params }) => json(await service.getRequest(getDb(env), params.projectId, Number(params.id))),
  }),
  route({
    method: 'DELETE',
    path: `${BASE}/:id`,
    access: authenticated(),
    tag: TAG,
    operationId: 'discardChangeRequestDraft',
    summary: "Discard the caller's draft",
    responses: ok,
    errors: [400, 401, 404],
    handler: async ({ env, principal, params }) => {
      await service.discardDraft(getDb(env), principal, params.projectId, Number(params.id));
      return empty(200);
    },
  }),
  route({
    method: 'PUT',
    path: `${BASE}/:id/changes/:changeId`,
    access: authenticated(),
    tag: TAG,
    operationId: 'editChange',
    summary: 'Edit a change of a change request',
    body: EditChangeBody,
    responses: ok,
    errors: [400, 401, 403, 404, 415],
    handler: async ({ env, principal, params, body }) => {
      await service.editChange(getDb(env), principal, params.projectId, Number(params.id), Number(params.changeId), body);
      return empty(200);
    },
  }),
  route({
    method: 'DELETE',
    path: `${BASE}/:id/changes/:changeId`,
    access: authenticated(),
    tag: TAG,
    operationId: 'discardChange',
    summary: 'Discard a change of a change request',
    responses: ok,
    errors: [400, 401, 404],
    handler: async ({ env, principal, params }) => {
      await service.discardChange(getDb(env), principal, params.projectId, Number(params.id), Number(params.changeId));
      return empty(200);
    },
  }),
  route({
    method: 'PUT',
    path: `${BASE}/:id/state`,
    access: authenticated(),
    tag: TAG,
    operationId: 'changeChangeRequestState',
    summary: 'Send to review, approve, reject, schedule, apply or cancel a change request',
    body: StateBody,
    responses: { 200: { description: 'The change request', schema: ChangeRequestAnswer } },
    errors: [400, 401, 403, 404, 409, 415],
    handler: async ({ env, principal, params, body }) => {
      const request = await changeState(getDb(env), principal, params.projectId, Number(params.id), body);
      await followSchedule(env, request);
      return json(request);
    },
  }),
  route({
    method: 'PUT',
    path: `${BASE}/:id/title`,
    access: authenticated(),
    tag: TAG,
    operationId: 'updateChangeRequestTitle',
    summary: 'Rename a change request',
    body: TitleBody,
    responses: ok,
    errors: [400, 401, 404, 415],
    handler: async ({ env, principal, params, body }) => {
      await service.setTitle(getDb(env), principal, params.projectId, Number(params.id), body.title);
      return empty(200);
    },
  }),
  route({
    method: 'POST',
    path: `${BASE}/:id/comments`,
    access: authenticated(),
    tag: TAG,
    operationId: 'addChangeRequestComment',
    summary: 'Comment on a change request',
    body: CommentBody,
    responses: ok,
    errors: [400, 401, 404, 415],
    handler: async ({ env, principal, params, body }) => {
      await service.addComment(getDb(env), principal, params.projectId, Number(params.id), body.text);
      return empty(200);
    },
  }),
];
