/**
 * Moving a change request between states, with the four-eyes rules enforced here (not only in
 * the UI): the author sends a draft to review and may cancel; someone else approves or rejects
 * (APPROVE_CHANGE_REQUEST), and it is approved once `minApprovals` distinct people have;
 * APPLY_CHANGE_REQUEST applies it now or schedules it. Applying is one D1 batch: every change's
 * statements (the direct writes' own), the state and the events, or nothing.
 */
import type { Db, Statement } from '../../db/client';
import { runBatch } from '../../db/client';
import type { Actor } from '../../db/events';
import {
  APPLY_CHANGE_REQUEST,
  APPROVE_CHANGE_REQUEST,
  requireAnyPermission,
  type Permission,
  type PermissionHolder,
} from '../../auth/permissions';
import { ApiError, badRequest } from '../../http/errors';
import { applyStatements, conflictOf } from './changes';
import type { ChangeRequestState } from './schema';
import { nowIso, requestEvent } from './service';
import * as store from './store';
import { describeOne, requireRequest } from './view';

type Caller = Actor & PermissionHolder;

export interface StateChange {
  state: Exclude<ChangeRequestState, 'Draft'>;
  comment?: string | undefined;
  scheduledAt?: string | undefined;
}

function wrongState(row: store.ChangeRequestRow, wanted: string): ApiError {
  return badRequest(`A change request in state ${row.state} cannot be moved to ${wanted}`);
}

/** The change of state, unless another request moved it first (then nothing is written). */
async function move(db: Db, row: store.ChangeRequestRow, state: string, extra: Statement[], fields: Partial<store.ChangeRequestRow> = {}) {
  const stateTimestamps = { ...row.stateTimestamps, [state]: nowIso() };
  try {
    await runBatch(db, [
      store.moveRequest(db, row.id, row.state, { state, stateTimestamps, ...fields }),
      store.failUnlessMoved(db),
      ...extra,
    ]);
  } catch (error) {
    if (/malformed JSON/i.test(`${String(error)} ${String((error as Error).cause ?? '')}`)) {
      throw new ApiError(409, 'ConflictError', `Change request ${row.id} was changed by someone else meanwhile; reload it`);
    }
    throw error;
  }
}

function commentStatements(db: Db, caller: Caller, row: store.ChangeRequestRow, comment: string | undefined): Statement[] {
  return comment
    ? [store.insertComment(db, { changeRequestId: row.id, text: comment, createdByUserId: caller.userId, createdByName: caller.actorName })]
    : [];
}

/**
 * What every move checks first, in this order: the state it leaves, then the permission in the
 * request's environment (the author may cancel their own request without it).
 */
const TRANSITIONS: Record<StateChange['state'], { from: readonly string[]; permission?: Permission; authorMay?: boolean }> = {
  'In review': { from: ['Draft'] },
  Approved: { from: ['In review'], permission: APPROVE_CHANGE_REQUEST },
  Rejected: { from: ['In review', 'Approved', 'Scheduled'], permission: APPROVE_CHANGE_REQUEST },
  Cancelled: { from: ['Draft', 'In review', 'Approved', 'Scheduled'], permission: APPLY_CHANGE_REQUEST, authorMay: true },
  Scheduled: { from: ['Approved', 'Scheduled'], permission: APPLY_CHANGE_REQUEST },
  Applied: { from: ['Approved', 'Scheduled'], permission: APPLY_CHANGE_REQUEST },
};

export async function changeState(db: Db, caller: Caller, project: string, id: number, body: StateChange) {
  const row = await requireRequest(db, project, id);
  const isAuthor = row.createdByUserId === caller.userId;
  const transition = TRANSITIONS[body.state];
  if (!transition.from.includes(row.state)) throw wrongState(row, body.state);
  if (transition.permission && !(transition.authorMay && isAuthor))
    requireAnyPermission(caller, [transition.permission], project, row.environment);
  const comment = commentStatements(db, caller, row, body.comment);
  const event = (type: string, data?: Record<string, unknown>) => requestEvent(db, caller, row, type, data);
  switch (body.state) {
    case 'In review': {
      if (!isAuthor) throw badRequest('Only the author may send a change request to review');
      if ((await store.changesOf(db, [row.id])).length === 0) throw badRequest('A change request without changes cannot be sent to review');
      await move(db, row, 'In review', [...comment, event('change-request-sent-to-review')]);
      break;
    }
    case 'Approved': {
      if (isAuthor) throw badRequest('The author of a change request cannot approve it');
      const approvers = new Set(
        (await store.reviewsOf(db, [row.id])).filter((review) => review.verdict === 'approved').map((review) => review.userId),
      );
      if (approvers.has(caller.userId)) throw badRequest('You have already approved this change request');
      approvers.add(caller.userId);
      const review = [store.addReview(db, row.id, caller.userId, 'approved'), ...comment, event('change-request-approval-added')];
      if (approvers.size >= row.minApprovals) await move(db, row, 'Approved', [...review, event('change-request-approved')]);
      else await runBatch(db, review);
      break;
    }
    case 'Rejected': {
      if (isAuthor) throw badRequest('The author of a change request cannot reject it; cancel it instead');
      const review = store.addReview(db, row.id, caller.userId, 'rejected');
      await move(db, row, 'Rejected', [review, ...comment, event('change-request-rejected')], { scheduleStatus: null });
      break;
    }
    case 'Cancelled':
      await move(db, row, 'Cancelled', [...comment, event('change-request-cancelled')], { scheduleStatus: null });
      break;
    case 'Scheduled': {
      if (!body.scheduledAt) throw badRequest('scheduledAt is required to schedule a change request');
      const scheduledAt = new Date(body.scheduledAt).toISOString();
      if (scheduledAt <= nowIso()) throw badRequest('The scheduled time must be in the future');
      await move(db, row, 'Scheduled', [...comment, event('change-request-scheduled', { scheduledDate: scheduledAt })], {
        scheduledAt,
        scheduleStatus: 'pending',
        scheduleFailure: null,
        scheduledByUserId: caller.userId,
        scheduledByName: caller.actorName,
      });
      break;
    }
    case 'Applied':
      await apply(db, caller, row, comment, 'change-request-applied');
      break;
  }
  return describeOne(db, await requireRequest(db, project, id));
}

/**
 * Applies every change of the request in one batch after checking each for conflicts (a flag
 * or strategy that moved since drafting): all or none. Throws 409 on a conflict.
 */
export async function apply(db: Db, caller: Caller, row: store.ChangeRequestRow, extra: Statement[], eventType: string) {
  const statements: Statement[] = [];
  for (const change of await store.changesOf(db, [row.id])) {
    const target = { project: row.project, environment: row.environment, feature: change.feature };
    const conflict = await conflictOf(db, target, change.action, change.payload, change.base);
    if (conflict) throw new ApiError(409, 'ConflictError', `Change request ${row.id} cannot be applied: ${conflict}`);
    statements.push(...(await applyStatements(db, caller, target, change.action, change.payload)));
  }
  await move(db, row, 'Applied', [...statements, ...extra, requestEvent(db, caller, row, eventType)], { scheduleStatus: null });
}
