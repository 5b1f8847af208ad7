/**
 * Applying scheduled requests: at their time by their Durable Object alarm (scheduler.ts), and
 * by the cron trigger's sweep (src/scheduled.ts), which catches any whose alarm could not be
 * set. Each applies in the name of whoever scheduled it, with their rights at that time (gone
 * or no longer allowed to apply: it fails), in its own batch. One that cannot
 * apply (a conflict, a check the direct write would fail) stays Scheduled with its schedule
 * `failed` and the reason shown on the request page, and a failure event tells integrations.
 */
import { ADMIN_ACCESS, currentUserAccess, NO_ACCESS } from '../../auth/access';
import { APPLY_CHANGE_REQUEST, type Access } from '../../auth/permissions';
import type { Db } from '../../db/client';
import { runBatch } from '../../db/client';
import { ApiError } from '../../http/errors';
import { log } from '../../log';
import { requestEvent } from './service';
import { apply } from './states';
import * as store from './store';

/** Requests applied per run at most; the rest wait for the next run. */
const PER_RUN = 50;

/** Unleash acts as this user for admin API tokens; their rights are the token's (ADMIN) and do not change. */
const ADMIN_TOKEN_USER_ID = -42;

/**
 * What the person who scheduled the request may do now: the run acts with their rights of
 * today, not with full rights, and fails (as Unleash does) if they are gone or may no longer
 * apply change requests there.
 */
async function schedulerAccess(db: Db, row: store.ChangeRequestRow, userId: number): Promise<Access> {
  if (userId === ADMIN_TOKEN_USER_ID) return ADMIN_ACCESS;
  const access = await currentUserAccess(db, userId);
  if (!access) throw new ApiError(403, 'NoAccessError', 'The user who scheduled this change request no longer exists');
  if (!access.may(APPLY_CHANGE_REQUEST, row.project, row.environment))
    throw new ApiError(
      403,
      'NoAccessError',
      `The user who scheduled this change request no longer has the "${APPLY_CHANGE_REQUEST}" permission in ${row.environment}`,
    );
  return access;
}

/** Applies one Scheduled request (its time has come); records why if it cannot. */
async function applyScheduled(db: Db, row: store.ChangeRequestRow): Promise<'applied' | 'failed' | 'moved'> {
  const userId = row.scheduledByUserId ?? row.createdByUserId;
  const actor = { actorName: row.scheduledByName ?? row.createdByName, userId, access: NO_ACCESS };
  try {
    actor.access = await schedulerAccess(db, row, userId);
    await apply(db, actor, row, [], 'change-request-scheduled-application-success');
    return 'applied';
  } catch (error) {
    const reason = error instanceof ApiError ? error.message : 'The change request could not be applied';
    if (!(error instanceof ApiError)) log.error('scheduled change request failed', { id: row.id, error: String(error) });
    try {
      // Only while it is still Scheduled: the alarm and the sweep may race, and the other one may have applied it.
      await runBatch(db, [
        store.moveRequest(db, row.id, 'Scheduled', { scheduleStatus: 'failed', scheduleFailure: reason }),
        store.failUnlessMoved(db),
        requestEvent(db, actor, row, 'change-request-scheduled-application-failure', { failureReason: reason }),
      ]);
    } catch {
      return 'moved';
    }
    return 'failed';
  }
}

/** The cron sweep: every Scheduled request due at `now`. */
export async function applyDueRequests(db: Db, now: Date) {
  let applied = 0;
  let failed = 0;
  for (const row of await store.dueRequests(db, now.toISOString(), PER_RUN)) {
    const outcome = await applyScheduled(db, row);
    if (outcome === 'applied') applied++;
    if (outcome === 'failed') failed++;
  }
  return { applied, failed };
}

/**
 * The alarm of one request, set for `scheduledAt`: applies it if it is still Scheduled for that
 * very time (not cancelled, rejected, applied, rescheduled, nor failed meanwhile).
 */
export async function applyAtAlarm(db: Db, id: number, scheduledAt: string) {
  const row = await store.findRequest(db, id);
  if (!row || row.state !== 'Scheduled' || row.scheduleStatus !== 'pending' || row.scheduledAt !== scheduledAt) return 'not-due';
  return applyScheduled(db, row);
}
