/**
 * What SDKs report back: registrations and usage counts. A registration is written at once
 * (one per SDK start). A metrics post is validated, scoped to the key's environment and cut
 * to what can be stored, then handed to the metrics Queue as one message (usage-message.ts);
 * the consumer (usage-queue.ts) merges a batch of them into hourly counts per feature, app
 * and environment, last seen, lifecycle and instance rows. See docs/metrics.md.
 */
import { sql } from 'drizzle-orm';
import { d1Statement, getDb, runD1Batch, type Db } from '../../db/client';
import { announceApplicationIfNew, SYSTEM_ACTOR } from '../../db/events';
import { clientApplications, clientInstances } from '../../db/schema';
import type { Env } from '../../env';
import { parseImpactMetrics, type ImpactMetric } from '../impact-metrics/parse';
import { queuedUsage, settledUsage } from './usage-inflight';
import type { UsageCount, UsageInstance, UsageMessage } from './usage-message';
import type { BulkMetricsBody, EdgeInstanceBody, MetricsBody, RegisterBody } from './schema';

function isStorableName(name: string): boolean {
  return name.length > 0 && name.length <= 255 && name.isWellFormed() && !name.includes('\u0000');
}

function hourOf(iso: string): string {
  const date = new Date(iso);
  date.setUTCMinutes(0, 0, 0);
  return date.toISOString();
}

export interface SdkCaller {
  environment: string;
  clientIp: string | null;
  /** Set for a frontend key: public by design, so what it may write is bounded (see usage-queue.ts). */
  frontend?: { tokenId: string; projects: readonly string[] };
}

/** New client instances (each a new app name or instance id) one frontend key may create per day. */
export const FRONTEND_NEW_INSTANCES_PER_DAY = 100;

function instanceUpsert(
  db: Db,
  caller: SdkCaller,
  appName: string,
  instanceId: string,
  sdkVersion: string | null,
  interval: number | null,
  now: string,
) {
  return db
    .insert(clientInstances)
    .values({
      appName,
      instanceId,
      environment: caller.environment,
      sdkVersion,
      clientIp: caller.clientIp,
      interval,
      lastSeen: now,
      createdByToken: caller.frontend?.tokenId ?? null,
    })
    .onConflictDoUpdate({
      target: [clientInstances.appName, clientInstances.instanceId, clientInstances.environment],
      set: {
        sdkVersion: sql`coalesce(excluded.sdk_version, ${clientInstances.sdkVersion})`,
        clientIp: sql`excluded.client_ip`,
        interval: sql`coalesce(excluded.interval, ${clientInstances.interval})`,
        lastSeen: sql`excluded.last_seen`,
      },
    });
}

/**
 * An SDK starting: its application (announced with an `application-created` event the first
 * time, as Unleash announces every new application) and its instance, in one batch.
 */
export async function recordRegistration(dbEnv: { DB: D1Database }, caller: SdkCaller, body: RegisterBody): Promise<void> {
  const db = getDb(dbEnv);
  const now = new Date().toISOString();
  const strategies = [...new Set(body.strategies)];
  await runD1Batch(db, [
    announceApplicationIfNew(db, {
      appName: body.appName,
      createdAt: now,
      updatedAt: now,
      description: null,
      strategies,
      createdBy: SYSTEM_ACTOR.actorName,
      url: null,
      color: null,
      icon: null,
    }),
    d1Statement(
      db,
      db
        .insert(clientApplications)
        .values({ appName: body.appName, strategies, createdAt: now, updatedAt: now, seenAt: now })
        .onConflictDoUpdate({ target: clientApplications.appName, set: { strategies, updatedAt: now, seenAt: now } }),
    ),
    d1Statement(
      db,
      instanceUpsert(db, caller, body.appName, body.instanceId ?? 'default', body.sdkVersion ?? null, Math.round(body.interval), now),
    ),
  ]);
}

/** Counts of one flag for one app in one hour, merged within one Edge bulk post. */
interface UsageRecord {
  featureName: string;
  appName: string;
  /** Start of the hour, ISO. */
  timestamp: string;
  yes: number;
  no: number;
  variants: Map<string, number>;
}

type Counts = { yes: number; no: number; variants?: Record<string, number> | null };

/** The variants worth keeping: positive counts under storable names. */
function storableVariants(variants: Record<string, number> | null | undefined): Record<string, number> {
  if (!variants) return {};
  let kept: [string, number][] | undefined;
  for (const name of Object.keys(variants)) {
    const value = variants[name]!;
    if (value > 0 && isStorableName(name)) (kept ??= []).push([name, value]);
  }
  // fromEntries defines every name as an own key, `__proto__` too.
  return kept ? Object.fromEntries(kept) : {};
}

/** Adds counts into `into`, keyed per flag, app and hour; skips empty and unstorable entries. */
function addRecord(into: Map<string, UsageRecord>, featureName: string, appName: string, stop: string, counts: Counts): void {
  // No flag has such a name (names are validated when flags are written), so skip it
  // before it reaches SQL.
  if (counts.yes + counts.no === 0 || !isStorableName(featureName)) return;
  const timestamp = hourOf(stop);
  const key = JSON.stringify([featureName, appName, timestamp]);
  const record = into.get(key) ?? { featureName, appName, timestamp, yes: 0, no: 0, variants: new Map<string, number>() };
  record.yes += counts.yes;
  record.no += counts.no;
  for (const [variant, value] of Object.entries(counts.variants ?? {})) {
    if (value > 0 && isStorableName(variant)) record.variants.set(variant, (record.variants.get(variant) ?? 0) + value);
  }
  into.set(key, record);
}

function countsOf(records: Iterable<UsageRecord>): UsageCount[] {
  const counts: UsageCount[] = [];
  for (const record of records) {
    // fromEntries defines every name as an own key, `__proto__` too.
    counts.push([record.featureName, record.appName, record.timestamp, record.yes, record.no, Object.fromEntries(record.variants)]);
  }
  return counts;
}

/** A browser's bucket end if it is within the last hour (or a few minutes ahead); else now. */
function plausibleStop(stop: string, now: string): string {
  const at = Date.parse(stop);
  const current = Date.parse(now);
  return at >= current - 60 * 60 * 1000 && at <= current + 5 * 60 * 1000 ? stop : now;
}

/** What one message may carry: the Queue takes at most 128 KB a message; leave room for the rest. */
const MESSAGE_BUDGET_BYTES = 96_000;
const encoder = new TextEncoder();

/** UTF-8 bytes of `text`: counted only when its length alone does not settle that it fits. */
function fitsBudget(text: string): boolean {
  // A UTF-16 code unit is at most 3 bytes of UTF-8, and at least 1.
  if (text.length * 3 <= MESSAGE_BUDGET_BYTES) return true;
  if (text.length > MESSAGE_BUDGET_BYTES) return false;
  return encoder.encode(text).length <= MESSAGE_BUDGET_BYTES;
}

function sizeOf(value: unknown): number {
  return encoder.encode(JSON.stringify(value)).length;
}

/**
 * The messages of one post: usually one; a post too large for one message is cut into parts,
 * each counted once on its own. A frontend key's instance goes with every part, since its
 * bound is checked per message.
 */
function messagesOf(
  caller: SdkCaller,
  now: string,
  counts: UsageCount[],
  instances: UsageInstance[],
  seenApps?: string[],
  impact: ImpactMetric[] = [],
) {
  const base = {
    environment: caller.environment,
    receivedAt: now,
    ...(caller.frontend ? { frontend: { tokenId: caller.frontend.tokenId, projects: [...caller.frontend.projects] } } : {}),
    ...(seenApps && seenApps.length > 0 ? { seenApps } : {}),
  };
  // The usual post fits one message: measured once, as a whole.
  const whole: UsageMessage = { id: crypto.randomUUID(), ...base, counts, instances, ...(impact.length > 0 ? { impact } : {}) };
  if (fitsBudget(JSON.stringify(whole))) return [whole];

  const messages: UsageMessage[] = [];
  const fresh = (): UsageMessage => ({ id: crypto.randomUUID(), ...base, counts: [], instances: caller.frontend ? instances : [] });
  let current = fresh();
  let size = sizeOf(current);
  const push = (bytes: number) => {
    if (size + bytes > MESSAGE_BUDGET_BYTES && (current.counts.length > 0 || current.instances.length > 0 || current.impact)) {
      messages.push(current);
      current = fresh();
      size = sizeOf(current);
    }
    size += bytes;
  };
  if (!caller.frontend) {
    for (const instance of instances) {
      push(sizeOf(instance));
      current.instances.push(instance);
    }
  }
  for (const count of counts) {
    push(sizeOf(count));
    current.counts.push(count);
  }
  // Impact metrics follow, a metric cut between parts by its samples where it is too large for one.
  for (const metric of impact) {
    const { samples, ...head } = metric;
    push(sizeOf(head));
    let part: ImpactMetric = { ...head, samples: [] };
    (current.impact ??= []).push(part);
    for (const sample of samples) {
      const before = current;
      push(sizeOf(sample));
      if (current !== before) (current.impact ??= []).push((part = { ...head, samples: [] }));
      part.samples.push(sample);
    }
  }
  messages.push(current);
  return messages;
}

async function enqueue(env: Pick<Env, 'METRICS_QUEUE'>, messages: UsageMessage[]): Promise<void> {
  const ids = messages.map((message) => message.id);
  queuedUsage(ids);
  try {
    // JSON, not the structured clone: a flag or variant named `__proto__` stays a plain key.
    if (messages.length === 1) await env.METRICS_QUEUE.send(messages[0]!, { contentType: 'json' });
    else await Promise.all(messages.map((message) => env.METRICS_QUEUE.send(message, { contentType: 'json' })));
  } catch (error) {
    settledUsage(ids);
    throw error;
  }
}

/**
 * Queues one SDK metrics report. A frontend key's report is bounded: it counts in the last
 * hour or two (a bucket end further off, from a browser's clock or a forger, counts now), and
 * the consumer keeps it only for flags of the key's projects and an instance the key already
 * has or may still create today.
 */
export async function queueMetrics(env: Pick<Env, 'METRICS_QUEUE'>, caller: SdkCaller, body: MetricsBody): Promise<void> {
  const now = new Date().toISOString();
  const instanceId = body.instanceId ?? (caller.frontend ? 'default' : undefined);
  // One bucket names each flag once, for one app and one hour: nothing to merge.
  const counts: UsageCount[] = [];
  const bucket = body.bucket;
  if (bucket) {
    const hour = hourOf(caller.frontend ? plausibleStop(bucket.stop, now) : bucket.stop);
    const toggles = bucket.toggles;
    for (const name of Object.keys(toggles)) {
      const { yes, no, variants } = toggles[name]!;
      // No flag has an unstorable name (names are validated when flags are written): skipped before SQL.
      if (yes + no === 0 || !isStorableName(name)) continue;
      counts.push([name, body.appName, hour, yes, no, storableVariants(variants)]);
    }
  }
  const instances: UsageInstance[] =
    instanceId === undefined ? [] : [{ appName: body.appName, instanceId, sdkVersion: body.sdkVersion ?? null, clientIp: caller.clientIp }];
  const impact = parseImpactMetrics(body.impactMetrics);
  if (counts.length === 0 && instances.length === 0 && impact.length === 0) return;
  await enqueue(env, messagesOf(caller, now, counts, instances, undefined, impact));
}

/**
 * Queues what Unleash Edge forwards for many apps at once. Like Unleash, only counts for the
 * key's own environment are kept.
 */
export async function queueBulkMetrics(env: Pick<Env, 'METRICS_QUEUE'>, caller: SdkCaller, body: BulkMetricsBody): Promise<void> {
  const now = new Date().toISOString();
  const records = new Map<string, UsageRecord>();
  for (const metric of body.metrics) {
    if (metric.environment !== caller.environment) continue;
    addRecord(records, metric.featureName, metric.appName, metric.timestamp, metric);
  }
  const instances = new Map<string, UsageInstance>();
  for (const application of body.applications) {
    if (application.environment !== undefined && application.environment !== null && application.environment !== caller.environment)
      continue;
    const instanceId = application.instanceId ?? 'default';
    const key = JSON.stringify([application.appName, instanceId]);
    if (!instances.has(key))
      instances.set(key, {
        appName: application.appName,
        instanceId,
        sdkVersion: application.sdkVersion ?? null,
        clientIp: caller.clientIp,
      });
  }
  const impact = parseImpactMetrics(body.impactMetrics);
  if (records.size === 0 && instances.size === 0 && impact.length === 0) return;
  await enqueue(env, messagesOf(caller, now, countsOf(records.values()), [...instances.values()], undefined, impact));
}

/** An Edge reporting itself: seen as an instance of its app, its version as the SDK version. */
export async function queueEdgeInstance(env: Pick<Env, 'METRICS_QUEUE'>, caller: SdkCaller, body: EdgeInstanceBody): Promise<void> {
  const now = new Date().toISOString();
  const sdkVersion = body.edgeVersion ? `unleash-edge:${body.edgeVersion}` : 'unleash-edge';
  const instance = { appName: body.appName, instanceId: body.identifier, sdkVersion, clientIp: caller.clientIp };
  await enqueue(env, messagesOf(caller, now, [], [instance], [body.appName]));
}
