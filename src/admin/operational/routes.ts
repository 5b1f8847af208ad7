/** Liveness and the API description: public, as Unleash serves them. */
import * as v from 'valibot';
import { getDb } from '../../db/client';
import { databaseAnswers } from '../../db/lookups';
import { empty, json, untyped } from '../../http/responses';
import { open, route, type Route } from '../../http/route';
import { openApiJson, openApiPage } from '../../openapi/routes';

/** The document lists every route; it is given them when the route list is complete. */
let allRoutes: () => readonly Route[] = () => [];
export function documentRoutes(routes: () => readonly Route[]): void {
  allRoutes = routes;
}

export const routes: Route[] = [
  route({
    method: 'GET',
    path: '/health',
    access: open(),
    tag: 'Operational',
    operationId: 'getHealth',
    summary: 'Whether the service is up',
    responses: { 200: { description: 'The service runs', schema: v.object({ health: v.literal('GOOD') }) } },
    handler: () => json({ health: 'GOOD' } as const),
  }),
  route({
    method: 'GET',
    path: '/ready',
    access: open(),
    tag: 'Operational',
    operationId: 'getReady',
    summary: 'Whether the service can serve requests (Unleash 7+)',
    description: 'Ready when the database answers: 200 as /health answers, else 503 with no body.',
    responses: {
      200: { description: 'Ready', schema: v.object({ health: v.literal('GOOD') }) },
      503: { description: 'Not ready: the database does not answer', schema: null },
    },
    handler: async ({ env }) => ((await databaseAnswers(getDb(env))) ? json({ health: 'GOOD' } as const) : empty(503)),
  }),
  route({
    method: 'GET',
    path: '/docs/openapi.json',
    access: open(),
    tag: 'Operational',
    operationId: 'getOpenApiDocument',
    summary: 'This API described as an OpenAPI 3.1 document',
    responses: { 200: { description: 'The OpenAPI document', schema: v.record(v.string(), v.unknown()) } },
    // The document is served as the string built once per route list.
    handler: () => untyped(openApiJson(allRoutes())),
  }),
  route({
    method: 'GET',
    path: '/docs/openapi',
    access: open(),
    tag: 'Operational',
    operationId: 'getOpenApiPage',
    summary: 'This API as a readable page',
    responses: { 200: { description: 'An HTML page listing every operation', schema: null, contentType: 'text/html' } },
    handler: () => untyped(openApiPage(allRoutes())),
  }),
];
