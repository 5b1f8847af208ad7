/**
 * The scheduled run (cron trigger, src/scheduled.ts): applies every Scheduled request whose
 * time has come, in the name of whoever scheduled it, each in its own batch. One that cannot
 * apply (a conflict, a check the direct write would fail) stays Scheduled with its schedule
 * `failed` and the reason shown on the request page, and a failure event tells integrations.
 */
import { ADMIN_ACCESS } from '../../auth/access';
import type { Db } from '../../db/client';
import { runBatch } from '../../db/client';
import { ApiError } from '../../http/errors';
import { log } from '../../log';
import { requestEvent } from './service';
import { apply } from './states';
import * as store from './store';

/** Requests applied per run at most; the rest wait for the next run. */
const PER_RUN = 50;

export async function applyDueRequests(db: Db, now: Date) {
  let applied = 0;
  let failed = 0;
  for (const row of await store.dueRequests(db, now.toISOString(), PER_RUN)) {
    // The person who scheduled it held APPLY_CHANGE_REQUEST then; the run acts for them.
    const actor = {
      actorName: row.scheduledByName ?? row.createdByName,
      userId: row.scheduledByUserId ?? row.createdByUserId,
      access: ADMIN_ACCESS,
    };
    try {
      await apply(db, actor, row, [], 'change-request-scheduled-application-success');
      applied++;
    } catch (error) {
      failed++;
      const reason = error instanceof ApiError ? error.message : 'The change request could not be applied';
      if (!(error instanceof ApiError)) log.error('scheduled change request failed', { id: row.id, error: String(error) });
      await runBatch(db, [
        store.updateRequest(db, row.id, { scheduleStatus: 'failed', scheduleFailure: reason }),
        requestEvent(db, actor, row, 'change-request-scheduled-application-failure', { failureReason: reason }),
      ]);
    }
  }
  return { applied, failed };
}
