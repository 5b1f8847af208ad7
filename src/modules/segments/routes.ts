/** Segments: named, reusable constraint sets that strategies refer to by id. */
import { CREATE_SEGMENT, UPDATE_PROJECT_SEGMENT, UPDATE_SEGMENT, requireAnyPermission } from '../../auth/permissions';
import { and, asc, eq, ne, sql } from 'drizzle-orm';
import * as v from 'valibot';
import { d1Statement, getDb, runBatch, runD1Batch, type Db } from '../../db/client';
import { auditEvent, auditEventWhere, type Actor } from '../../db/events';
import { featureStrategySegment, projects, segments } from '../../db/schema';
import { ApiError, badRequest, conflict, notFound } from '../../http/errors';
import { readJsonBody } from '../../http/body';
import { empty, json } from '../../http/responses';
import { integerId, nonBlank, parseInput, text } from '../../http/validation';
import { ConstraintSchema } from '../features/schema';
import { pathParam } from '../../http/params';
import { segmentProject } from '../../auth/scopes';
import { DELETE_SEGMENT } from '../../auth/permissions';
import { admin, adminInBody, authenticated, route, type Route, type AdminContext } from '../../http/route';
import { GetSegmentsResponse, CreateSegment201Response, GetSegmentResponse } from './schema';

const SegmentSchema = v.object({
  name: nonBlank(255),
  description: v.optional(v.nullable(text(1000))),
  project: v.optional(v.nullable(nonBlank(100))),
  constraints: v.optional(v.pipe(v.array(ConstraintSchema), v.maxLength(100, 'must have at most 100 items')), []),
});

type SegmentRow = typeof segments.$inferSelect;

function segmentShape(row: SegmentRow) {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    constraints: row.constraints,
    project: row.segmentProjectId,
    createdBy: row.createdBy,
    createdAt: row.createdAt,
  };
}

export async function list({ env }: AdminContext): Promise<Response> {
  const rows = await getDb(env).select().from(segments).orderBy(asc(segments.id));
  return json({ segments: rows.map(segmentShape) });
}

async function segmentById(env: AdminContext['env'], request: AdminContext['request']) {
  const id = parseInput(v.object({ id: integerId }), { id: pathParam(request, 'id') }, '/params').id;
  const [row] = await getDb(env).select().from(segments).where(eq(segments.id, id)).limit(1);
  if (!row) throw notFound(`Could not find segment with id ${id}`);
  return row;
}

export async function get({ request, env }: AdminContext): Promise<Response> {
  return json(segmentShape(await segmentById(env, request)));
}

export async function create({ request, env, principal, body }: AdminContext<v.InferOutput<typeof SegmentSchema>>): Promise<Response> {
  // A project segment may be made by whoever may edit that project's segments (Unleash's rule).
  requireAnyPermission(principal, [CREATE_SEGMENT, UPDATE_PROJECT_SEGMENT], body.project ?? undefined);
  const db = getDb(env);
  if (body.project) {
    const project = await db.select({ id: projects.id }).from(projects).where(eq(projects.id, body.project)).limit(1);
    if (project.length === 0) throw badRequest(`Project=${body.project} does not exist`);
  }
  const taken = await db.select({ id: segments.id }).from(segments).where(eq(segments.name, body.name)).limit(1);
  if (taken.length > 0) throw conflict(`There already exists a segment with the name ${body.name}`);
  const [inserted] = await db.batch([
    db
      .insert(segments)
      .values({
        name: body.name,
        description: body.description ?? null,
        constraints: body.constraints,
        segmentProjectId: body.project ?? null,
        createdBy: principal.actorName,
      })
      .returning(),
    auditEvent(db, principal, { type: 'segment-created', project: body.project ?? null, data: body }),
  ]);
  const row = inserted[0]!;
  return json(segmentShape(row), 201, { location: `/api/admin/segments/${row.id}` });
}

/**
 * The delete write: deletes the segment only if no strategy uses it — checked by the delete
 * itself, as a strategy linked after a separate check would lose the segment to the cascade
 * and silently reach everyone. Returns whether it deleted.
 */
export async function deleteIfUnused(db: Db, actor: Actor, row: typeof segments.$inferSelect): Promise<boolean> {
  const unused = sql`NOT EXISTS (SELECT 1 FROM ${featureStrategySegment} WHERE ${featureStrategySegment.segmentId} = ${row.id})`;
  const [deleted] = await runD1Batch(db, [
    d1Statement(db, db.delete(segments).where(and(eq(segments.id, row.id), unused))),
    // changes(): the rows the delete just above removed, in this same batch.
    d1Statement(db, auditEventWhere(actor, { type: 'segment-deleted', preData: segmentShape(row) }, sql`changes() = 1`)),
  ]);
  return deleted!.meta.changes > 0;
}

export async function remove({ request, env, principal }: AdminContext): Promise<Response> {
  const row = await segmentById(env, request);
  if (!(await deleteIfUnused(getDb(env), principal, row))) {
    await segmentById(env, request); // 404 if it went meanwhile
    throw new ApiError(409, 'SegmentInUseError', `Segment ${row.name} is in use by strategies and cannot be deleted.`);
  }
  return empty(200);
}

export async function update({ request, env, principal, body }: AdminContext<v.InferOutput<typeof SegmentSchema>>): Promise<Response> {
  const row = await segmentById(env, request);
  // The route checked the segment's current project; moving it needs the same right where it goes.
  if ((body.project ?? null) !== row.segmentProjectId)
    requireAnyPermission(principal, [UPDATE_SEGMENT, UPDATE_PROJECT_SEGMENT], body.project ?? undefined);
  const db = getDb(env);
  if (body.project) {
    const project = await db.select({ id: projects.id }).from(projects).where(eq(projects.id, body.project)).limit(1);
    if (project.length === 0) throw badRequest(`Project=${body.project} does not exist`);
  }
  const taken = await db
    .select({ id: segments.id })
    .from(segments)
    .where(and(eq(segments.name, body.name), ne(segments.id, row.id)))
    .limit(1);
  if (taken.length > 0) throw conflict(`There already exists a segment with the name ${body.name}`);
  const changes = {
    name: body.name,
    description: body.description ?? null,
    constraints: body.constraints,
    segmentProjectId: body.project ?? null,
  };
  await runBatch(db, [
    db.update(segments).set(changes).where(eq(segments.id, row.id)),
    // Strategies using the segment change what SDKs evaluate, so this is a flag change too.
    auditEvent(db, principal, {
      type: 'segment-updated',
      project: body.project ?? null,
      data: { id: row.id, ...body },
      preData: segmentShape(row),
    }),
  ]);
  return empty(204);
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
    handler: list,
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
    handler: create,
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
    handler: get,
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
    handler: update,
  }),
  route({
    method: 'DELETE',
    path: '/api/admin/segments/:id',
    access: admin([DELETE_SEGMENT, UPDATE_PROJECT_SEGMENT], segmentProject('id')),
    tag: 'Segments',
    operationId: 'removeSegment',
    summary: 'Delete a segment that no strategy uses',
    responses: { 200: { description: 'Success', schema: null } },
    errors: [400, 404, 409],
    handler: remove,
  }),
];
