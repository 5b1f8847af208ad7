/**
 * Delivery of audit events to integrations, off the request path. The trigger on `events`
 * writes a delivery row for each event an enabled integration subscribes to, in the same
 * transaction as the event; `flushOutbox` (after each admin write, in `waitUntil`, and on
 * every cron tick) hands the new rows to the Queue; the consumer sends each one:
 *
 * - one send at a time per delivery: a send claims the row (with a lease), and a row that is
 *   `sent` is never sent again, whatever the Queue redelivers;
 * - in order per flag: a delivery waits while an earlier one of the same flag and
 *   integration is still to be sent (re-queued with a delay, not counted as a retry);
 * - with a timeout; 5xx, 429 and network errors are retried with exponential backoff; any
 *   other answer is final and logged;
 * - after the last retry the dead-letter queue's consumer records the failure, with the
 *   last reason, in the integration's log.
 */
import { getDb, type Db } from '../../db/client';
import type { Env } from '../../env';
import { log } from '../../log';
import type { DeliveryMessage } from './queue-message';
import { render, type AddonEvent } from './render';
import * as store from './store';
import type { LogEntry } from './store';
import { refusedTarget } from './targets';

export const INTEGRATIONS_QUEUE_NAME = 'unleash-integrations';
export const INTEGRATIONS_DLQ_NAME = 'unleash-integrations-dlq';

/** How long one send may take before it counts as a network error. */
const SEND_TIMEOUT_MS = 10_000;
/** A claim outlives the longest send: a consumer that died mid-send frees its row after this. */
const LEASE_MS = 4 * SEND_TIMEOUT_MS;
/** Rows handed to the Queue per `sendBatch` (its limit is 100 messages). */
const FLUSH_BATCH = 100;
/** At most this many batches per flush; the next flush (or cron tick) takes the rest. */
const FLUSH_ROUNDS = 10;
/** Backoff of retries: base (INTEGRATIONS_RETRY_DELAY_SECONDS, default 10) doubled per try, capped. */
const DEFAULT_RETRY_DELAY_SECONDS = 10;
const MAX_RETRY_DELAY_SECONDS = 15 * 60;
/** How long a delivery waits for an earlier one of its flag, and how many times. */
const ORDER_WAIT_SECONDS = 5;
const MAX_ORDER_WAITS = 500;

/** Hands the deliveries the trigger recorded to the Queue. Safe to run concurrently: the consumer sends each row once. */
export async function flushOutbox(env: Env): Promise<number> {
  const db = getDb(env);
  let queued = 0;
  for (let round = 0; round < FLUSH_ROUNDS; round++) {
    const rows = await store.unqueuedDeliveries(db, FLUSH_BATCH);
    if (rows.length === 0) break;
    await env.INTEGRATIONS_QUEUE.sendBatch(rows.map((row) => ({ body: { deliveryId: row.id } })));
    await store.markQueued(
      db,
      rows.map((row) => row.id),
      new Date().toISOString(),
    );
    queued += rows.length;
    if (rows.length < FLUSH_BATCH) break;
  }
  return queued;
}

/** `flushOutbox` after a request, never failing it: what it misses, the cron tick takes. */
export function flushAfterResponse(env: Env, ctx: ExecutionContext): void {
  ctx.waitUntil(flushOutbox(env).catch((error: unknown) => log.error('integration deliveries not queued', { error })));
}

export function retryDelaySeconds(env: Pick<Env, 'INTEGRATIONS_RETRY_DELAY_SECONDS'>, attempt: number): number {
  const configured = Number(env.INTEGRATIONS_RETRY_DELAY_SECONDS);
  const base = Number.isFinite(configured) && configured >= 0 ? configured : DEFAULT_RETRY_DELAY_SECONDS;
  return Math.min(MAX_RETRY_DELAY_SECONDS, Math.round(base * 2 ** Math.max(0, attempt - 1)));
}

/** The event as integrations get it: its row with the flag's current tags. */
export async function addonEvent(db: Db, eventId: number): Promise<AddonEvent | undefined> {
  const row = await store.findEvent(db, eventId);
  if (row === undefined) return undefined;
  return {
    id: row.id,
    type: row.type,
    createdBy: row.createdBy,
    createdAt: row.createdAt,
    createdByUserId: row.createdByUserId,
    data: row.data ?? null,
    preData: row.preData ?? null,
    tags: row.featureName ? await store.tagsOfFeature(db, row.featureName) : [],
    featureName: row.featureName,
    project: row.project,
    environment: row.environment,
  };
}

type TargetResult = { ok: boolean; detail: string; status?: number };
type Outcome = ({ kind: 'sent' } | { kind: 'final' } | { kind: 'retry' }) & { detail: string; status?: number };

/** One request: `sent` on 2xx, `retry` on 5xx, 429 and network errors, `final` otherwise. `slack` words the outcome as Unleash's Slack client does. */
async function send(url: string, init: RequestInit, label: string, slack: boolean): Promise<Outcome> {
  let response: Response;
  try {
    response = await fetch(url, { ...init, redirect: 'manual', signal: AbortSignal.timeout(SEND_TIMEOUT_MS) });
  } catch (error) {
    const timedOut = error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
    const reason = timedOut ? `timed out after ${SEND_TIMEOUT_MS / 1000} seconds` : String(error);
    return { kind: 'retry', detail: slack ? `A request error occurred: ${reason}` : `${label} failed: ${reason}` };
  }
  const status = response.status;
  const retryable = status >= 500 || status === 429;
  if (slack) {
    const answer = response.ok ? await slackAnswer(response) : (await response.body?.cancel(), null);
    if (response.ok && answer === null) return { kind: 'sent', detail: '', status };
    if (response.ok) return { kind: 'final', detail: `A platform error occurred: ${answer}`, status };
    return { kind: retryable ? 'retry' : 'final', detail: `An HTTP error occurred: status code ${status}`, status };
  }
  await response.body?.cancel();
  if (response.ok) return { kind: 'sent', detail: `${label} was successful with status code: ${status}.`, status };
  return { kind: retryable ? 'retry' : 'final', detail: `${label} failed with status code: ${status}.`, status };
}

/** Slack's Web API answers 200 with `ok: false` on errors: its answer then (as JSON), or null when it went through. */
async function slackAnswer(response: Response): Promise<string | null> {
  try {
    const body = (await response.json()) as { ok?: boolean };
    return body.ok === false ? JSON.stringify(body) : null;
  } catch {
    return null;
  }
}

const unique = (values: string[]) => [...new Set(values)];

/** The log's state and text for the results of every target, worded as Unleash words them per provider. */
function summarize(provider: string, results: TargetResult[], warnings: string[]): { state: LogEntry['state']; stateDetails: string } {
  const failed = results.filter((result) => !result.ok);
  const n = results.length;
  let line: string;
  if (provider === 'slack-app') {
    const errors = unique(failed.map((result) => result.detail)).join(' ');
    line =
      failed.length === 0
        ? `All (${n}) Slack client calls were successful.`
        : failed.length === n
          ? `All (${n}) Slack client calls failed with the following errors: ${errors}`
          : `Some (${failed.length} of ${n}) Slack client calls failed. Errors: ${errors}`;
  } else if (provider === 'slack') {
    const codes = unique(results.map((result) => String(result.status ?? ''))).join(', ');
    line =
      failed.length === 0
        ? `All (${n}) Slack webhook requests were successful with status codes: ${codes}.`
        : failed.length === n
          ? `All (${n}) Slack webhook requests failed with status codes: ${codes}.`
          : `Some (${failed.length} of ${n}) Slack webhook requests failed. Status codes: ${codes}.`;
  } else {
    line = results.map((result) => result.detail).join('\n');
  }
  const state = failed.length === n ? 'failed' : failed.length > 0 || warnings.length > 0 ? 'successWithErrors' : 'success';
  return { state, stateDetails: [...warnings, line].join('\n') };
}

async function deliver(env: Env, db: Db, message: Message<DeliveryMessage>): Promise<void> {
  const delivery = await store.findDelivery(db, message.body.deliveryId);
  if (delivery === undefined || delivery.status === 'sent' || delivery.status === 'failed') return message.ack();
  const addon = await store.findAddon(db, delivery.addonId);
  if (addon === undefined) return message.ack();

  const waits = message.body.waits ?? 0;
  if (waits < MAX_ORDER_WAITS && (await store.earlierUndelivered(db, delivery))) {
    await env.INTEGRATIONS_QUEUE.send({ deliveryId: delivery.id, waits: waits + 1 }, { delaySeconds: ORDER_WAIT_SECONDS });
    return message.ack();
  }

  const now = Date.now();
  const attempt = await store.claimDelivery(db, delivery.id, new Date(now).toISOString(), new Date(now + LEASE_MS).toISOString());
  if (attempt === null) {
    // Sent or failed meanwhile (ack), or being sent by another consumer (look again later).
    const current = await store.findDelivery(db, delivery.id);
    if (current?.status === 'sending') return message.retry({ delaySeconds: Math.ceil(LEASE_MS / 1000) });
    return message.ack();
  }

  const event = await addonEvent(db, delivery.eventId);
  if (event === undefined) {
    await store.finishDelivery(db, delivery, 'failed', {
      state: 'failed',
      stateDetails: 'The event no longer exists.',
      event: {},
      details: {},
    });
    return message.ack();
  }
  const rendered = await render(addon, event, env.UNLEASH_URL?.replace(/\/+$/, '') ?? '');
  const fail = async (detail: string) => {
    await store.finishDelivery(db, delivery, 'failed', { state: 'failed', stateDetails: detail, event, details: rendered.details }, detail);
    message.ack();
  };
  if (rendered.failure !== undefined) return fail(rendered.failure);
  const allowPrivate = env.INTEGRATIONS_ALLOW_PRIVATE_TARGETS === 'true';
  for (const request of rendered.requests) {
    const refused = refusedTarget(request.url, allowPrivate);
    if (refused !== null) return fail(refused);
  }

  // What each target answered in earlier tries: a target that took the message is not sent it again.
  const results: Record<string, TargetResult> = { ...(delivery.targets ?? {}) };
  const slack = addon.provider === 'slack-app';
  const retries: string[] = [];
  for (const request of rendered.requests) {
    if (results[request.target] !== undefined) continue;
    const outcome = await send(request.url, request.init, rendered.label, slack);
    if (outcome.kind === 'retry') {
      retries.push(outcome.detail);
      continue;
    }
    results[request.target] = {
      ok: outcome.kind === 'sent',
      detail: outcome.detail,
      ...(outcome.status ? { status: outcome.status } : {}),
    };
    // Recorded at once: should this consumer die now, the next try still skips this target.
    await store.recordTargets(db, delivery.id, results, new Date(Date.now() + LEASE_MS).toISOString());
  }
  if (retries.length > 0) {
    const reason = unique(retries).join(' ');
    await store.releaseDelivery(db, delivery.id, reason);
    log.warn('integration delivery will be retried', { addonId: addon.id, deliveryId: delivery.id, attempt, reason });
    return message.retry({ delaySeconds: retryDelaySeconds(env, attempt) });
  }
  const all = rendered.requests.map((request) => results[request.target]!);
  const { state, stateDetails } = summarize(addon.provider, all, rendered.warnings);
  await store.finishDelivery(
    db,
    delivery,
    state === 'failed' ? 'failed' : 'sent',
    { state, stateDetails, event, details: rendered.details },
    state === 'failed' ? stateDetails : undefined,
  );
  message.ack();
}

/** A message that used up its retries: the failure and its last reason go to the integration's log. */
async function deadLetter(db: Db, message: Message<DeliveryMessage>): Promise<void> {
  const delivery = await store.findDelivery(db, message.body.deliveryId);
  if (delivery === undefined || delivery.status === 'sent' || delivery.status === 'failed') return message.ack();
  const event = (await addonEvent(db, delivery.eventId)) ?? {};
  const reason = delivery.lastError ?? 'The delivery could not be completed.';
  const tries = delivery.attempts === 1 ? '1 try' : `${delivery.attempts} tries`;
  // Targets that took the message in an earlier try (a Slack channel of several) make it a partial success.
  const reached = Object.values(delivery.targets ?? {}).some((result) => result.ok);
  await store.finishDelivery(
    db,
    delivery,
    'failed',
    { state: reached ? 'successWithErrors' : 'failed', stateDetails: `Gave up after ${tries}. ${reason}`, event, details: {} },
    reason,
  );
  message.ack();
}

/** The consumer of both integration queues (src/index.ts dispatches by queue name). */
export async function handleIntegrationQueue(batch: MessageBatch<DeliveryMessage>, env: Env): Promise<void> {
  const db = getDb(env);
  const deadLetters = batch.queue === INTEGRATIONS_DLQ_NAME;
  // One after another: the batch is in the order the events were written.
  for (const message of batch.messages) {
    try {
      await (deadLetters ? deadLetter(db, message) : deliver(env, db, message));
    } catch (error) {
      log.error('integration delivery not handled', { deliveryId: message.body.deliveryId, deadLetters, error });
      message.retry({ delaySeconds: retryDelaySeconds(env, message.attempts) });
    }
  }
}
