/**
 * Exact-time scheduling: one Durable Object per scheduled change request, whose alarm is set
 * for the request's time when it is scheduled or rescheduled, and removed when it leaves
 * Scheduled (cancelled, rejected, applied by hand). The alarm applies the request at its time;
 * the cron sweep (every five minutes) stays as the catch-up for an alarm that could not be set.
 * The object keeps only the request's id and time; D1 stays the truth (a stale alarm finds the
 * request moved and does nothing).
 */
import { DurableObject } from 'cloudflare:workers';
import { getDb } from '../../db/client';
import type { Env } from '../../env';
import { flushOutbox } from '../../integrations/addons/delivery';
import { log } from '../../log';
import { announceWrite } from '../../sdk/push/announce';
import { applyAtAlarm } from './schedule';

interface Scheduled {
  id: number;
  scheduledAt: string;
}

const KEY = 'scheduled';

export class ChangeRequestScheduler extends DurableObject<Env> {
  /** Sets (or moves) the alarm to the request's time. */
  async schedule(id: number, scheduledAt: string): Promise<void> {
    await this.ctx.storage.put<Scheduled>(KEY, { id, scheduledAt });
    await this.ctx.storage.setAlarm(new Date(scheduledAt).getTime());
  }

  /** The request left Scheduled: no alarm. */
  async unschedule(): Promise<void> {
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
  }

  /** The request's time has come. */
  override async alarm(): Promise<void> {
    const scheduled = await this.ctx.storage.get<Scheduled>(KEY);
    if (!scheduled) return;
    const outcome = await applyAtAlarm(getDb(this.env), scheduled.id, scheduled.scheduledAt);
    log.info('scheduled change request alarm', { id: scheduled.id, outcome });
    await this.ctx.storage.deleteAll();
    if (outcome !== 'not-due' && outcome !== 'moved') {
      // Integrations hear of the outcome now, and SDK streams of an applied request.
      await flushOutbox(this.env).catch((error: unknown) => log.error('integration deliveries not queued', { error }));
      if (outcome === 'applied') await announceWrite(this.env);
    }
  }
}
