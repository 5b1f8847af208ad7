/** Segments: named, reusable constraint sets that strategies refer to by id. */
import { CREATE_SEGMENT, UPDATE_PROJECT_SEGMENT, UPDATE_SEGMENT, requireAnyPermission } from '../../auth/permissions';
import type { Principal } from '../../auth/principal';
import type { Db } from '../../db/client';
import type { Actor } from '../../db/events';
import { ApiError, badRequest, conflict, notFound } from '../../http/errors';
import type { SegmentInput } from './schema';
import * as store from './store';

export function segmentShape(row: store.SegmentRow) {
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

export async function listSegments(db: Db) {
  return { segments: (await store.listAll(db)).map(segmentShape) };
}

export async function segmentById(db: Db, id: number): Promise<store.SegmentRow> {
  const row = await store.byId(db, id);
  if (!row) throw notFound(`Could not find segment with id ${id}`);
  return row;
}

async function checkProjectAndName(db: Db, body: SegmentInput, exceptId?: number): Promise<void> {
  if (body.project && !(await store.projectExists(db, body.project))) throw badRequest(`Project=${body.project} does not exist`);
  if (await store.nameTaken(db, body.name, exceptId)) throw conflict(`There already exists a segment with the name ${body.name}`);
}

function values(body: SegmentInput): store.SegmentValues {
  return {
    name: body.name,
    description: body.description ?? null,
    constraints: body.constraints,
    segmentProjectId: body.project ?? null,
  };
}

export async function createSegment(db: Db, principal: Principal, body: SegmentInput) {
  // A project segment may be made by whoever may edit that project's segments (Unleash's rule).
  requireAnyPermission(principal, [CREATE_SEGMENT, UPDATE_PROJECT_SEGMENT], body.project ?? undefined);
  await checkProjectAndName(db, body);
  const row = await store.insert(db, principal, values(body), { type: 'segment-created', project: body.project ?? null, data: body });
  return segmentShape(row);
}

export async function updateSegment(db: Db, principal: Principal, id: number, body: SegmentInput): Promise<void> {
  const row = await segmentById(db, id);
  // The route checked the segment's current project; moving it needs the same right where it goes.
  if ((body.project ?? null) !== row.segmentProjectId)
    requireAnyPermission(principal, [UPDATE_SEGMENT, UPDATE_PROJECT_SEGMENT], body.project ?? undefined);
  await checkProjectAndName(db, body, row.id);
  // Strategies using the segment change what SDKs evaluate, so this is a flag change too.
  await store.update(db, principal, row.id, values(body), {
    type: 'segment-updated',
    project: body.project ?? null,
    data: { id: row.id, ...body },
    preData: segmentShape(row),
  });
}

/** The delete write, for a segment read before: false when a strategy uses it (or it is gone). */
export function deleteIfUnused(db: Db, actor: Actor, row: store.SegmentRow): Promise<boolean> {
  return store.deleteIfUnused(db, actor, row.id, { type: 'segment-deleted', preData: segmentShape(row) });
}

export async function deleteSegment(db: Db, actor: Actor, id: number): Promise<void> {
  const row = await segmentById(db, id);
  if (!(await deleteIfUnused(db, actor, row))) {
    await segmentById(db, id); // 404 if it went meanwhile
    throw new ApiError(409, 'SegmentInUseError', `Segment ${row.name} is in use by strategies and cannot be deleted.`);
  }
}
