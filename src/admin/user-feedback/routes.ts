/** Feedback questionnaires: the route objects; the rules are in service.ts. */
import { getDb } from '../../db/client';
import { json } from '../../http/responses';
import { authenticated, route, type Route } from '../../http/route';
import { parseInput } from '../../http/validation';
import { CreateFeedbackSchema, FeedbackParams, FeedbackResponse, UpdateFeedbackSchema } from './schema';
import * as service from './service';

export const routes: Route[] = [
  route({
    method: 'POST',
    path: '/api/admin/feedback',
    access: authenticated(),
    tag: 'Admin UI',
    operationId: 'createFeedback',
    summary: "Record the caller's answer to a feedback questionnaire",
    body: CreateFeedbackSchema,
    responses: { 200: { description: 'The stored feedback', schema: FeedbackResponse } },
    errors: [400, 413, 415],
    handler: async ({ env, principal, body }) => json(await service.createFeedback(getDb(env), principal, body)),
  }),
  route({
    method: 'PUT',
    path: '/api/admin/feedback/:id',
    access: authenticated(),
    tag: 'Admin UI',
    operationId: 'updateFeedback',
    summary: "Change the caller's answer to a feedback questionnaire",
    body: UpdateFeedbackSchema,
    responses: { 200: { description: 'The stored feedback', schema: FeedbackResponse } },
    errors: [400, 413, 415],
    handler: async ({ env, principal, params, body }) => {
      const { id } = parseInput(FeedbackParams, params, '/params');
      return json(await service.updateFeedback(getDb(env), principal, id, body));
    },
  }),
];
