/**
 * Type-level checks of the typed answers (src/http/route.ts, src/http/responses.ts), checked by
 * `npm run typecheck` (test/tsconfig.json) and never run. Each `@ts-expect-error` marks an answer
 * that must not compile: were the handler's answer no longer typed by the route's declared
 * `responses`, the directive would be unused and the typecheck would fail.
 */
import * as v from 'valibot';
import { empty, json, untyped } from '../../src/http/responses';
import { authenticated, route, type Route } from '../../src/http/route';

const Widget = v.object({ id: v.number(), name: v.string(), note: v.nullable(v.string()), tags: v.optional(v.array(v.string())) });

export const accepted: Route[] = [
  // The declared shape: accepted, and so are keys the schema does not name (a v.object lets them through).
  route({
    method: 'GET',
    path: '/typed/:id',
    access: authenticated(),
    tag: 'Types',
    operationId: 'typedOk',
    summary: 'A widget',
    responses: { 200: { description: 'A widget', schema: Widget }, 204: { description: 'None', schema: null } },
    handler: async ({ params }) => (params.id === '0' ? empty(204) : json({ id: Number(params.id), name: 'w', note: null, extra: true })),
  }),
  // A second declared status, given explicitly.
  route({
    method: 'POST',
    path: '/typed',
    access: authenticated(),
    tag: 'Types',
    operationId: 'typedCreated',
    summary: 'Create a widget',
    responses: { 201: { description: 'Created', schema: Widget } },
    handler: () => json({ id: 1, name: 'w', note: 'n', tags: ['a'] }, 201, { location: '/typed/1' }),
  }),
  // The explicit way out: a stream, a redirect, a 304.
  route({
    method: 'GET',
    path: '/typed/stream',
    access: authenticated(),
    tag: 'Types',
    operationId: 'typedStream',
    summary: 'Events',
    responses: { 200: { description: 'Events', schema: null, contentType: 'text/event-stream' } },
    handler: () => untyped(new Response('data: 1\n\n', { headers: { 'content-type': 'text/event-stream' } })),
  }),
];

export const refused: Route[] = [
  route({
    method: 'GET',
    path: '/typed/wrong-type',
    access: authenticated(),
    tag: 'Types',
    operationId: 'typedWrongType',
    summary: 'A field of the wrong type',
    responses: { 200: { description: 'A widget', schema: Widget } },
    // @ts-expect-error `id` is declared a number
    handler: () => json({ id: '1', name: 'w', note: null }),
  }),
  route({
    method: 'GET',
    path: '/typed/missing',
    access: authenticated(),
    tag: 'Types',
    operationId: 'typedMissing',
    summary: 'A required field left out',
    responses: { 200: { description: 'A widget', schema: Widget } },
    // @ts-expect-error `note` is required (nullable, not optional)
    handler: async () => json({ id: 1, name: 'w' }),
  }),
  route({
    method: 'POST',
    path: '/typed/undeclared-status',
    access: authenticated(),
    tag: 'Types',
    operationId: 'typedUndeclaredStatus',
    summary: 'A status the route does not declare',
    responses: { 201: { description: 'Created', schema: Widget } },
    // @ts-expect-error only 201 is declared: a plain json(...) answers 200
    handler: () => json({ id: 1, name: 'w', note: null }),
  }),
  route({
    method: 'DELETE',
    path: '/typed/body-on-empty',
    access: authenticated(),
    tag: 'Types',
    operationId: 'typedBodyOnEmpty',
    summary: 'A body where none is declared',
    responses: { 204: { description: 'Deleted', schema: null } },
    // @ts-expect-error 204 is declared without a body
    handler: () => json({ deleted: true }, 204),
  }),
  route({
    method: 'GET',
    path: '/typed/empty-on-body',
    access: authenticated(),
    tag: 'Types',
    operationId: 'typedEmptyOnBody',
    summary: 'No body where one is declared',
    responses: { 200: { description: 'A widget', schema: Widget } },
    // @ts-expect-error 200 is declared with a widget
    handler: () => empty(200),
  }),
  route({
    method: 'GET',
    path: '/typed/by-hand',
    access: authenticated(),
    tag: 'Types',
    operationId: 'typedByHand',
    summary: 'A Response built by hand without saying so',
    responses: { 200: { description: 'A widget', schema: Widget } },
    // @ts-expect-error a hand-built Response must go through `untyped(...)`
    handler: () => new Response(JSON.stringify({ id: 'not checked' })),
  }),
  route({
    method: 'GET',
    path: '/typed/nested',
    access: authenticated(),
    tag: 'Types',
    operationId: 'typedNested',
    summary: 'A wrong shape deep in a list',
    responses: { 200: { description: 'Widgets', schema: v.object({ widgets: v.array(Widget) }) } },
    // @ts-expect-error `tags` holds strings
    handler: () => json({ widgets: [{ id: 1, name: 'w', note: null, tags: [1] }] }),
  }),
];
