/** Segments: the route objects; the rules are in service.ts. */
import { CREATE_SEGMENT, DELETE_SEGMENT, UPDATE_FEATURE_STRATEGY, UPDATE_PROJECT_SEGMENT, UPDATE_SEGMENT } from '../../auth/permissions';
import { segmentProject } from '../../auth/scopes';
import { getDb } from '../../db/client';
import { empty, json } from '../../http/responses';
import { admin, adminInBody, authenticated, route, type Route } from '../../http/route';
import { parseInput } from '../../http/validation';
import {
  CreateSegment201Response,
  GetSegmentResponse,
  GetSegmentsResponse,
  SegmentIdParams,
  SegmentNameSchema,
  SegmentSchema,
  SegmentStrategiesResponse,
  SegmentsOfStrategyResponse,
  StrategySegmentsResponse,
  StrategySegmentsSchema,
} from './schema';
import * as service from './service';

function segmentId(params: { id: string }): number {
  return parseInput(SegmentIdParams, params, '/params').id;
}

export const routes: Route[] = [
  route({
    method: 'GET',
    path: '/api/admin/segments',
    access: authenticated(),
    tag: 'Segments',
    operationId: 'getSegments',
    summary: 'List segments',
    responses: { 200: { description: 'Success', schema: GetSegmentsResponse } },
    handler: async ({ env }) => json(await service.listSegments(getDb(env))),
  }),
  route({
    method: 'POST',
    path: '/api/admin/segments',
    access: adminInBody([CREATE_SEGMENT, UPDATE_PROJECT_SEGMENT], (body) => ({
      project: (body as { project?: string | null }).project ?? undefined,
    })),
    tag: 'Segments',
    operationId: 'createSegment',
    summary: 'Create a segment',
    body: SegmentSchema,
    responses: { 201: { description: 'Created', schema: CreateSegment201Response } },
    errors: [400, 403, 409, 413],
    handler: async ({ env, principal, body }) => {
      const segment = await service.createSegment(getDb(env), principal, body);
      return json(segment, 201, { location: `/api/admin/segments/${segment.id}` });
    },
  }),
  route({
    method: 'GET',
    path: '/api/admin/segments/:id',
    access: authenticated(),
    tag: 'Segments',
    operationId: 'getSegment',
    summary: 'Get a segment',
    responses: { 200: { description: 'Success', schema: GetSegmentResponse } },
    errors: [400, 404],
    handler: async ({ env, params }) => json(service.segmentShape(await service.segmentById(getDb(env), segmentId(params)))),
  }),
  route({
    method: 'PUT',
    path: '/api/admin/segments/:id',
    access: admin([UPDATE_SEGMENT, UPDATE_PROJECT_SEGMENT], segmentProject('id')),
    tag: 'Segments',
    operationId: 'updateSegment',
    summary: 'Update a segment',
    body: SegmentSchema,
    responses: { 204: { description: 'Done, no content', schema: null } },
    errors: [400, 403, 404, 409, 413],
    handler: async ({ env, principal, params, body }) => {
      await service.updateSegment(getDb(env), principal, segmentId(params), body);
      return empty(204);
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/admin/segments/:id',
    access: admin([DELETE_SEGMENT, UPDATE_PROJECT_SEGMENT], segmentProject('id')),
    tag: 'Segments',
    operationId: 'removeSegment',
    summary: 'Delete a segment that no strategy uses',
    responses: { 204: { description: 'Deleted, no content', schema: null } },
    errors: [400, 404, 409],
    handler: async ({ env, principal, params }) => {
      await service.deleteSegment(getDb(env), principal, segmentId(params));
      return empty(204);
    },
  }),
  route({
    method: 'POST',
    path: '/api/admin/segments/validate',
    access: authenticated(),
    tag: 'Segments',
    operationId: 'validateSegment',
    summary: 'Check that a segment name is free',
    body: SegmentNameSchema,
    responses: { 204: { description: 'The name is free', schema: null } },
    errors: [400, 409, 413, 415],
    handler: async ({ env, body }) => {
      await service.validateName(getDb(env), body.name);
      return empty(204);
    },
  }),
  route({
    method: 'GET',
    path: '/api/admin/segments/:id/strategies',
    access: authenticated(),
    tag: 'Segments',
    operationId: 'getStrategiesBySegmentId',
    summary: 'List the strategies that use a segment',
    responses: { 200: { description: 'Success', schema: SegmentStrategiesResponse } },
    errors: [400],
    handler: async ({ env, params }) => json(await service.strategiesOfSegment(getDb(env), segmentId(params))),
  }),
  route({
    method: 'GET',
    path: '/api/admin/segments/strategies/:strategyId',
    access: authenticated(),
    tag: 'Segments',
    operationId: 'getSegmentsByStrategyId',
    summary: 'List the segments a strategy uses',
    responses: { 200: { description: 'Success', schema: SegmentsOfStrategyResponse } },
    errors: [400],
    handler: async ({ env, params }) => json(await service.segmentsOfStrategy(getDb(env), params.strategyId)),
  }),
  route({
    method: 'POST',
    path: '/api/admin/segments/strategies',
    access: adminInBody(UPDATE_FEATURE_STRATEGY, (body) => {
      const named = body as { projectId: string; environmentId: string };
      return { project: named.projectId, environment: named.environmentId };
    }),
    tag: 'Strategies',
    operationId: 'updateFeatureStrategySegments',
    summary: 'Replace the segments a strategy uses',
    body: StrategySegmentsSchema,
    responses: { 201: { description: 'Done', schema: StrategySegmentsResponse, headers: { location: 'strategies/<strategyId>' } } },
    errors: [400, 403, 404, 413, 415],
    handler: async ({ env, principal, body }) => {
      await service.setStrategySegments(getDb(env), principal, body);
      return json(body, 201, { location: `strategies/${body.strategyId}` });
    },
  }),
];
