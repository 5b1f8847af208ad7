/**
 * The route side of exact-time scheduling (the object itself is in scheduler.ts): which object
 * keeps a request's alarm, and keeping that alarm in step with the request's state. Kept apart
 * from the object's class so that the route table loads outside workerd (the Node tests read
 * it), where `cloudflare:workers` does not exist.
 */
import type { Env } from '../../env';
import { log } from '../../log';

/** The object of one request. */
export function schedulerOf(env: Pick<Env, 'CHANGE_REQUEST_SCHEDULER'>, id: number) {
  return env.CHANGE_REQUEST_SCHEDULER.get(env.CHANGE_REQUEST_SCHEDULER.idFromName(`change-request-${id}`));
}

/**
 * After a state change: the alarm follows the request (set while it is Scheduled and pending,
 * removed once it left Scheduled). A failure is logged, not answered: the request is already
 * moved in D1, and the cron sweep applies it within five minutes of its time.
 */
export async function followSchedule(
  env: Pick<Env, 'CHANGE_REQUEST_SCHEDULER'>,
  request: { id: number; state: string; stateTimestamps: Record<string, string>; schedule?: { status: string; scheduledAt: string } },
): Promise<void> {
  if (!('Scheduled' in request.stateTimestamps)) return;
  try {
    const scheduler = schedulerOf(env, request.id);
    if (request.state === 'Scheduled' && request.schedule?.status === 'pending')
      await scheduler.schedule(request.id, request.schedule.scheduledAt);
    else if (request.state !== 'Scheduled') await scheduler.unschedule();
  } catch (error) {
    log.error('change request alarm not set', { id: request.id, error: String(error) });
  }
}
