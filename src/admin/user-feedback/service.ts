/**
 * Feedback questionnaires (the UI's "how are we doing?" prompts): what a person answered or
 * dismissed, so the UI does not ask again. Unleash records no audit event for them. A person
 * holds at most MAX_FEEDBACK_PER_USER of them, so the endpoint cannot be used to fill D1.
 */
import type { Principal } from '../../auth/principal';
import type { Db } from '../../db/client';
import { badRequest } from '../../http/errors';
import type { CreateFeedbackInput, Feedback, UpdateFeedbackInput } from './schema';
import * as store from './store';

const MAX_FEEDBACK_PER_USER = 50;

function shape(row: store.FeedbackRow): Feedback {
  return { neverShow: row.neverShow, feedbackId: row.feedbackId, given: row.given, userId: row.userId };
}

/** The person behind the call: an API token has none to remember feedback for. */
function personOf(principal: Principal): number {
  if (principal.kind !== 'user') throw badRequest('Feedback is given by a signed-in person, not by an API token');
  return principal.userId;
}

async function save(db: Db, userId: number, feedbackId: string, given: string, neverShow: boolean): Promise<Feedback> {
  if (!(await store.exists(db, userId, feedbackId)) && (await store.countOfUser(db, userId)) >= MAX_FEEDBACK_PER_USER) {
    throw badRequest(`A person can hold at most ${MAX_FEEDBACK_PER_USER} feedback answers`);
  }
  return shape(await store.upsert(db, { userId, feedbackId, given, neverShow }));
}

export function createFeedback(db: Db, principal: Principal, body: CreateFeedbackInput): Promise<Feedback> {
  return save(db, personOf(principal), body.feedbackId, new Date().toISOString(), body.neverShow ?? false);
}

/** Unleash ignores a `userId` in the body: the feedback is always the caller's. */
export function updateFeedback(db: Db, principal: Principal, feedbackId: string, body: UpdateFeedbackInput): Promise<Feedback> {
  const given = body.given ?? new Date().toISOString();
  return save(db, personOf(principal), feedbackId, given, body.neverShow ?? false);
}

/** The feedback list of `GET /api/admin/user`. */
export async function feedbackOf(db: Db, userId: number): Promise<Feedback[]> {
  return (await store.ofUser(db, userId)).map(shape);
}
