/**
 * The metrics Queue's consumer: a batch of posts (usage-message.ts) becomes one D1 batch.
 * Counts are merged per (flag, app, environment, hour) cell, last seen per flag and
 * environment, instances per (app, instance, environment), so the statements of a flush do
 * not grow with the posts in it: one statement per table, its rows passed as one JSON text.
 *
 * - Each message counts once: its id goes into the flush's one row in `metrics_flushes`, in the
 *   same atomic batch as its counts, and a message found there is acknowledged without
 *   writing. Two consumers flushing the same message race on that row's check; the loser's
 *   batch rolls back whole and is retried, and then finds the message counted.
 * - A failed flush writes nothing (the batch is atomic); its messages are retried with
 *   backoff, and after the last retry the dead-letter consumer applies each message on its
 *   own (a message that cannot be applied no longer holds back the others), logging the
 *   reason of any that still fails.
 */
import { sql, type SQL } from 'drizzle-orm';
import { d1Statement, getDb, runD1Batch, type Db } from '../../db/client';
import {
  clientApplications,
  clientInstances,
  clientMetricsEnv,
  features,
  featureEnvironments,
  metricsFlushes,
  metricsMessages,
  unknownFlags,
} from '../../db/schema';
import type { Env } from '../../env';
import { log } from '../../log';
import { ImpactBatch } from '../impact-metrics/series';
import { FRONTEND_NEW_INSTANCES_PER_DAY } from './usage';
import { settledUsage } from './usage-inflight';
import type { UsageMessage } from './usage-message';

export const METRICS_QUEUE_NAME = 'unleash-metrics';
export const METRICS_DLQ_NAME = 'unleash-metrics-dlq';

/** Backoff of retries: base (METRICS_RETRY_DELAY_SECONDS, default 5) doubled per try, capped. */
const DEFAULT_RETRY_DELAY_SECONDS = 5;
const MAX_RETRY_DELAY_SECONDS = 300;
/** Rows of one JSON parameter: D1 takes strings up to 2 MB; stay well under. */
const JSON_PARAMETER_BYTES = 500_000;
/** Messages whose payloads add up to more than this are written in more than one D1 batch. */
const GROUP_BYTES = 2_000_000;
const DAY_MS = 24 * 60 * 60 * 1000;
/**
 * Unknown flag names (Unleash 7.0+'s registry) taken from one frontend key's post: the key is
 * public, so what anyone can write there is bounded, per post and in all.
 */
const UNKNOWN_PER_FRONTEND_POST = 50;
const UNKNOWN_FLAGS_KEPT = 10_000;

function metricsRetryDelaySeconds(env: Pick<Env, 'METRICS_RETRY_DELAY_SECONDS'>, attempt: number): number {
  const configured = Number(env.METRICS_RETRY_DELAY_SECONDS);
  const base = Number.isFinite(configured) && configured >= 0 ? configured : DEFAULT_RETRY_DELAY_SECONDS;
  return Math.min(MAX_RETRY_DELAY_SECONDS, Math.round(base * 2 ** Math.max(0, attempt - 1)));
}

const encoder = new TextEncoder();

/** `rows` as JSON arrays of at most JSON_PARAMETER_BYTES each (none for no rows). */
function jsonParts(rows: readonly unknown[]): string[] {
  const parts: string[] = [];
  let current: string[] = [];
  let size = 2;
  for (const row of rows) {
    const text = JSON.stringify(row);
    const bytes = encoder.encode(text).length + 1;
    if (current.length > 0 && size + bytes > JSON_PARAMETER_BYTES) {
      parts.push(`[${current.join(',')}]`);
      current = [];
      size = 2;
    }
    current.push(text);
    size += bytes;
  }
  if (current.length > 0) parts.push(`[${current.join(',')}]`);
  return parts;
}

/** One statement per JSON part of `rows`. */
function perPart(db: Db, rows: readonly unknown[], build: (json: string) => SQL): D1PreparedStatement[] {
  return jsonParts(rows).map((json) => d1Statement(db, build(json)));
}

const key = (...parts: string[]) => JSON.stringify(parts);

/** What D1 knows that decides what a batch may write: read in one round trip. */
interface BatchContext {
  processed: Set<string>;
  /** Flags that exist, with their project. */
  projectOf: Map<string, string>;
  /** Frontend messages allowed to write (their instance is known, or the key's quota allows it). */
  frontendAllowed: Set<string>;
}

async function readContext(db: Db, messages: readonly UsageMessage[], now: number): Promise<BatchContext> {
  const ids = messages.map((message) => message.id);
  const names = [...new Set(messages.flatMap((message) => message.counts.map((count) => count[0])))];
  const frontend = messages.filter((message) => message.frontend !== undefined);
  const instanceKeys = [
    ...new Map(
      frontend.flatMap((message) => message.instances.map((i) => [key(i.appName, i.instanceId, message.environment), i] as const)),
    ).keys(),
  ].map((text) => JSON.parse(text) as string[]);
  const tokens = [...new Set(frontend.map((message) => message.frontend!.tokenId))];
  const since = new Date(now - DAY_MS).toISOString();

  // A flush that counted one of these messages holds it in its ids and has max_received at or
  // after that message's receipt, so only flushes since the oldest receipt are looked through.
  const oldest = messages.reduce((min, message) => (message.receivedAt < min ? message.receivedAt : min), messages[0]?.receivedAt ?? '');
  const statements: D1PreparedStatement[] = [
    ...perPart(
      db,
      ids,
      (json) => sql`SELECT j.value AS id FROM ${metricsFlushes} f, json_each(f.message_ids) j
      WHERE f.max_received >= ${oldest} AND j.value IN (SELECT value FROM json_each(${json}))`,
    ),
    // Counted before flushes were recorded as one row each (until those rows expire).
    ...perPart(
      db,
      ids,
      (json) =>
        sql`SELECT ${metricsMessages.id} AS id FROM ${metricsMessages} WHERE ${metricsMessages.id} IN (SELECT value FROM json_each(${json}))`,
    ),
  ];
  const processedStatements = statements.length;
  statements.push(
    ...perPart(
      db,
      names,
      (json) =>
        sql`SELECT ${features.name} AS name, ${features.project} AS project FROM ${features} WHERE ${features.name} IN (SELECT value FROM json_each(${json}))`,
    ),
  );
  const featureStatements = statements.length;
  if (frontend.length > 0) {
    statements.push(
      ...perPart(
        db,
        instanceKeys,
        (json) => sql`SELECT k.value AS instance FROM json_each(${json}) k WHERE EXISTS (SELECT 1 FROM ${clientInstances} c
          WHERE c.app_name = json_extract(k.value, '$[0]') AND c.instance_id = json_extract(k.value, '$[1]') AND c.environment = json_extract(k.value, '$[2]'))`,
      ),
    );
    statements.push(
      ...perPart(
        db,
        tokens,
        (
          json,
        ) => sql`SELECT t.value AS token, (SELECT count(*) FROM ${clientInstances} c WHERE c.created_by_token = t.value AND c.created_at > ${since}) AS created
          FROM json_each(${json}) t`,
      ),
    );
  }
  const results = statements.length === 0 ? [] : await runD1Batch(db, statements);
  const processed = new Set<string>();
  const projectOf = new Map<string, string>();
  const known = new Set<string>();
  const created = new Map<string, number>();
  results.forEach((result, index) => {
    for (const row of result.results as Record<string, string | number>[]) {
      if (index < processedStatements) processed.add(row.id as string);
      else if (index < featureStatements) projectOf.set(row.name as string, row.project as string);
      else if ('instance' in row) known.add(key(...(JSON.parse(row.instance as string) as string[])));
      else created.set(row.token as string, row.created as number);
    }
  });

  // In the order the posts came: a known instance writes; a new one while its key's quota lasts.
  const frontendAllowed = new Set<string>();
  for (const message of frontend) {
    if (processed.has(message.id)) continue;
    const tokenId = message.frontend!.tokenId;
    const fresh = message.instances.map((i) => key(i.appName, i.instanceId, message.environment)).filter((k) => !known.has(k));
    const used = created.get(tokenId) ?? 0;
    if (used + fresh.length > FRONTEND_NEW_INSTANCES_PER_DAY) continue;
    created.set(tokenId, used + fresh.length);
    for (const k of fresh) known.add(k);
    frontendAllowed.add(message.id);
  }
  return { processed, projectOf, frontendAllowed };
}

type Cell = { yes: number; no: number; variants: Map<string, number> };
type Instance = { sdkVersion: string | null; clientIp: string | null; lastSeen: string; createdByToken: string | null };

const later = (a: string | undefined, b: string) => (a === undefined || b > a ? b : a);
const earlier = (a: string | undefined, b: string) => (a === undefined || b < a ? b : a);

/**
 * The flush's own row: the ids of its messages, one row whatever their number. It fails (a NOT
 * NULL violation on `flushed_at`, so the whole atomic batch rolls back) if another flush
 * committed since this one read has counted one of them: two consumers flushing the same
 * message at once both try, and only the first to commit counts it; the other is retried and
 * then finds it counted.
 */
function flushRecord(db: Db, messages: readonly UsageMessage[], now: string): D1PreparedStatement {
  const ids = JSON.stringify(messages.map((message) => message.id));
  const received = messages.map((message) => message.receivedAt).sort();
  const oldest = received[0]!;
  const newest = received[received.length - 1]!;
  return d1Statement(
    db,
    sql`INSERT INTO ${metricsFlushes} (flushed_at, min_received, max_received, message_ids)
      SELECT CASE WHEN EXISTS (SELECT 1 FROM ${metricsFlushes} f, json_each(f.message_ids) j
          WHERE f.max_received >= ${oldest} AND j.value IN (SELECT value FROM json_each(${ids})))
        OR EXISTS (SELECT 1 FROM ${metricsMessages} WHERE ${metricsMessages.id} IN (SELECT value FROM json_each(${ids})))
      THEN NULL ELSE ${now} END, ${oldest}, ${newest}, ${ids}`,
  );
}

/** The D1 statements that apply `messages` (already filtered to those not yet counted), the flush's row first. */
function flushStatements(db: Db, messages: readonly UsageMessage[], context: BatchContext, now: string): D1PreparedStatement[] {
  const cells = new Map<string, Cell>();
  /** Per flag and environment: the first and last time seen. */
  const pairs = new Map<string, { first: string; last: string }>();
  const flags = new Map<string, { first: string; last: string }>();
  const instances = new Map<string, Instance>();
  const seenApps = new Map<string, string>();

  /** Per unknown name, application and environment: the latest report. */
  const unknown = new Map<string, string>();
  const impact = new ImpactBatch();

  for (const message of messages) {
    const frontend = message.frontend;
    if (frontend !== undefined && !context.frontendAllowed.has(message.id)) continue;
    const everyProject = frontend === undefined || frontend.projects.includes('*');
    const at = message.receivedAt;
    let unknownInPost = 0;
    for (const [featureName, appName, hour, yes, no, variants] of message.counts) {
      const project = context.projectOf.get(featureName);
      // Names that are not flags go to the unknown-flags registry, from every kind of key as
      // Unleash 8 takes them (bounded for a frontend key), and only with an evaluation counted.
      if (project === undefined && yes + no > 0 && (frontend === undefined || unknownInPost++ < UNKNOWN_PER_FRONTEND_POST)) {
        const unknownKey = key(featureName, appName, message.environment);
        unknown.set(unknownKey, later(unknown.get(unknownKey), at));
      }
      // A backend key's (or Edge's) counts for a flag that does not exist are kept, as Unleash
      // keeps them: the application's page lists them as missing flags. A frontend key is
      // public, so its counts are kept only for flags of its projects, which it can see.
      if (frontend !== undefined && (project === undefined || (!everyProject && !frontend.projects.includes(project)))) continue;
      const cellKey = key(featureName, appName, message.environment, hour);
      const cell = cells.get(cellKey) ?? { yes: 0, no: 0, variants: new Map<string, number>() };
      cell.yes += yes;
      cell.no += no;
      for (const [variant, value] of Object.entries(variants)) cell.variants.set(variant, (cell.variants.get(variant) ?? 0) + value);
      cells.set(cellKey, cell);
      // Last seen and lifecycle belong to flags that exist.
      if (project === undefined) continue;
      const pairKey = key(featureName, message.environment);
      const pair = pairs.get(pairKey);
      pairs.set(pairKey, { first: earlier(pair?.first, at), last: later(pair?.last, at) });
      const flag = flags.get(featureName);
      flags.set(featureName, { first: earlier(flag?.first, at), last: later(flag?.last, at) });
    }
    for (const instance of message.instances) {
      const instanceKey = key(instance.appName, instance.instanceId, message.environment);
      const current = instances.get(instanceKey);
      const newer = current === undefined || at >= current.lastSeen;
      instances.set(instanceKey, {
        sdkVersion: newer ? (instance.sdkVersion ?? current?.sdkVersion ?? null) : (current.sdkVersion ?? instance.sdkVersion),
        clientIp: newer ? instance.clientIp : current.clientIp,
        lastSeen: newer ? at : current.lastSeen,
        createdByToken: current?.createdByToken ?? frontend?.tokenId ?? null,
      });
    }
    for (const appName of message.seenApps ?? []) seenApps.set(appName, later(seenApps.get(appName), at));
    if (message.impact) impact.add(message.impact, at);
  }

  const statements = [flushRecord(db, messages, now)];
  statements.push(
    ...perPart(
      db,
      [...unknown].map(([unknownKey, seenAt]) => [...(JSON.parse(unknownKey) as string[]), seenAt]),
      (json) => sql`INSERT INTO ${unknownFlags} (name, app_name, environment, seen_at)
        SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]'), json_extract(value, '$[3]')
        FROM json_each(${json}) WHERE (SELECT count(*) FROM ${unknownFlags}) < ${UNKNOWN_FLAGS_KEPT}
        ON CONFLICT (name, app_name, environment) DO UPDATE SET seen_at = max(${unknownFlags}.seen_at, excluded.seen_at)`,
    ),
  );
  const cellRows = [...cells].map(([cellKey, cell]) => [
    ...(JSON.parse(cellKey) as string[]),
    cell.yes,
    cell.no,
    // fromEntries defines every name as an own key, `__proto__` too.
    Object.fromEntries(cell.variants),
  ]);
  statements.push(
    ...perPart(
      db,
      cellRows,
      (json) => sql`INSERT INTO ${clientMetricsEnv} (feature_name, app_name, environment, timestamp, "yes", "no", variants)
        SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]'), json_extract(value, '$[3]'),
          json_extract(value, '$[4]'), json_extract(value, '$[5]'), json_extract(value, '$[6]')
        FROM json_each(${json}) WHERE true
        ON CONFLICT (feature_name, app_name, environment, timestamp) DO UPDATE SET
          "yes" = ${clientMetricsEnv}."yes" + excluded."yes",
          "no" = ${clientMetricsEnv}."no" + excluded."no",
          variants = CASE WHEN excluded.variants = '{}' THEN ${clientMetricsEnv}.variants ELSE
            (SELECT json_group_object(key, total) FROM (SELECT key, sum(value) AS total FROM
              (SELECT key, value FROM json_each(${clientMetricsEnv}.variants) UNION ALL SELECT key, value FROM json_each(excluded.variants)) GROUP BY key)) END`,
    ),
  );
  const instanceRows = [...instances].map(([instanceKey, i]) => [
    ...(JSON.parse(instanceKey) as string[]),
    i.sdkVersion,
    i.clientIp,
    i.lastSeen,
    i.createdByToken,
  ]);
  statements.push(
    ...perPart(
      db,
      instanceRows,
      (json) => sql`INSERT INTO ${clientInstances} (app_name, instance_id, environment, sdk_version, client_ip, last_seen, created_by_token)
        SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]'), json_extract(value, '$[3]'),
          json_extract(value, '$[4]'), json_extract(value, '$[5]'), json_extract(value, '$[6]')
        FROM json_each(${json}) WHERE true
        ON CONFLICT (app_name, instance_id, environment) DO UPDATE SET
          sdk_version = coalesce(excluded.sdk_version, ${clientInstances}.sdk_version),
          client_ip = CASE WHEN excluded.last_seen >= coalesce(${clientInstances}.last_seen, '') THEN excluded.client_ip ELSE ${clientInstances}.client_ip END,
          last_seen = max(coalesce(${clientInstances}.last_seen, ''), excluded.last_seen)`,
    ),
  );
  // A live stage entered in the same flush must sort after its pre-live stage.
  const liveAt = (first: string) => new Date(Date.parse(first) + 1).toISOString();
  const pairRows = [...pairs].map(([pairKey, seen]) => [...(JSON.parse(pairKey) as string[]), liveAt(seen.first), seen.last]);
  const flagRows = [...flags].map(([name, seen]) => [name, seen.first, seen.last]);
  statements.push(
    ...perPart(
      db,
      pairRows,
      (json) => sql`UPDATE ${featureEnvironments} SET last_seen_at = s.seen
        FROM (SELECT json_extract(value, '$[0]') AS feature, json_extract(value, '$[1]') AS environment, json_extract(value, '$[3]') AS seen FROM json_each(${json})) AS s
        WHERE ${featureEnvironments}.feature_name = s.feature AND ${featureEnvironments}.environment = s.environment
          AND (${featureEnvironments}.last_seen_at IS NULL OR ${featureEnvironments}.last_seen_at < s.seen)`,
    ),
    ...perPart(
      db,
      flagRows,
      (json) => sql`UPDATE ${features} SET last_seen_at = s.seen
        FROM (SELECT json_extract(value, '$[0]') AS feature, json_extract(value, '$[2]') AS seen FROM json_each(${json})) AS s
        WHERE ${features}.name = s.feature AND (${features}.last_seen_at IS NULL OR ${features}.last_seen_at < s.seen)`,
    ),
    // Seen at all: pre-live, as Unleash moves it.
    ...perPart(
      db,
      flagRows,
      (json) => sql`INSERT INTO feature_lifecycles (feature, stage, status, status_value, created_at)
        SELECT f.name, 'pre-live', NULL, NULL, json_extract(s.value, '$[1]')
        FROM json_each(${json}) s JOIN ${features} f ON f.name = json_extract(s.value, '$[0]')
        WHERE f.archived_at IS NULL
        ON CONFLICT DO NOTHING`,
    ),
    // Seen enabled in a production environment: live, a millisecond after its pre-live stage.
    ...perPart(
      db,
      pairRows,
      (json) => sql`INSERT INTO feature_lifecycles (feature, stage, status, status_value, created_at)
        SELECT fe.feature_name, 'live', NULL, NULL, json_extract(s.value, '$[2]')
        FROM json_each(${json}) s
        JOIN ${featureEnvironments} fe ON fe.feature_name = json_extract(s.value, '$[0]') AND fe.environment = json_extract(s.value, '$[1]')
        JOIN environments e ON e.name = fe.environment
        JOIN ${features} f ON f.name = fe.feature_name
        WHERE e.type = 'production' AND fe.enabled = 1 AND f.archived_at IS NULL
        ON CONFLICT DO NOTHING`,
    ),
    ...perPart(
      db,
      [...seenApps],
      (json) => sql`INSERT INTO ${clientApplications} (app_name, strategies, updated_at, seen_at)
        SELECT json_extract(value, '$[0]'), '[]', json_extract(value, '$[1]'), json_extract(value, '$[1]') FROM json_each(${json}) WHERE true
        ON CONFLICT (app_name) DO UPDATE SET seen_at = max(coalesce(${clientApplications}.seen_at, ''), excluded.seen_at)`,
    ),
  );
  statements.push(...impact.statements(db));
  return statements;
}

/** Messages in runs whose payloads stay under GROUP_BYTES: each run is one atomic D1 batch. */
function groupsOf<M extends { body: UsageMessage }>(messages: readonly M[]): M[][] {
  const groups: M[][] = [];
  let current: M[] = [];
  let size = 0;
  for (const message of messages) {
    const bytes = encoder.encode(JSON.stringify(message.body)).length;
    if (current.length > 0 && size + bytes > GROUP_BYTES) {
      groups.push(current);
      current = [];
      size = 0;
    }
    current.push(message);
    size += bytes;
  }
  if (current.length > 0) groups.push(current);
  return groups;
}

interface FlushOutcome<M> {
  /** Counted now, or found counted before: acknowledge. */
  done: M[];
  /** Not written (nothing of theirs is): retry. */
  failed: M[];
  error?: unknown;
}

/** Applies a batch of messages; each is either done (counted once) or failed (nothing of it written). */
async function flushUsage<M extends { body: UsageMessage }>(env: Pick<Env, 'DB'>, messages: readonly M[]): Promise<FlushOutcome<M>> {
  const db = getDb(env);
  const now = Date.now();
  // The Queue may hand the same message twice in a batch: it is applied once.
  const unique = [...new Map(messages.map((message) => [message.body.id, message] as const)).values()];
  let context: BatchContext;
  try {
    context = await readContext(
      db,
      unique.map((message) => message.body),
      now,
    );
  } catch (error) {
    return { done: [], failed: [...messages], error };
  }
  const pending = unique.filter((message) => !context.processed.has(message.body.id));
  const groups = groupsOf(pending);
  for (const [index, group] of groups.entries()) {
    try {
      await runD1Batch(
        db,
        flushStatements(
          db,
          group.map((message) => message.body),
          context,
          new Date(now).toISOString(),
        ),
      );
    } catch (error) {
      const failed = groups.slice(index).flat();
      const failedIds = new Set(failed.map((message) => message.body.id));
      return {
        done: messages.filter((message) => !failedIds.has(message.body.id)),
        failed: messages.filter((m) => failedIds.has(m.body.id)),
        error,
      };
    }
  }
  return { done: [...messages], failed: [] };
}

function summary(message: Message<UsageMessage>) {
  return {
    id: message.body.id,
    environment: message.body.environment,
    receivedAt: message.body.receivedAt,
    counts: message.body.counts.length,
    instances: message.body.instances.length,
    attempts: message.attempts,
  };
}

/** The `queue` handler of the metrics queue and its dead-letter queue. */
export async function handleMetricsQueue(batch: MessageBatch<UsageMessage>, env: Env): Promise<void> {
  if (batch.queue === METRICS_DLQ_NAME) {
    await handleDeadLetters(batch, env);
    return;
  }
  const outcome = await flushUsage(env, batch.messages);
  for (const message of outcome.done) message.ack();
  settledUsage(outcome.done.map((message) => message.body.id));
  if (outcome.failed.length === 0) return;
  const attempts = Math.max(...outcome.failed.map((message) => message.attempts));
  log.error('metrics flush failed; its messages will be retried', {
    error: outcome.error,
    messages: outcome.failed.length,
    attempts,
  });
  for (const message of outcome.failed) message.retry({ delaySeconds: metricsRetryDelaySeconds(env, message.attempts) });
}

/**
 * Messages that failed every retry: each is applied on its own (a message that cannot be
 * applied no longer holds back those flushed with it); one that still fails is logged with
 * the reason and dropped.
 */
async function handleDeadLetters(batch: MessageBatch<UsageMessage>, env: Env): Promise<void> {
  for (const message of batch.messages) {
    const outcome = await flushUsage(env, [message]);
    if (outcome.failed.length === 0) log.warn('metrics message applied from the dead-letter queue', summary(message));
    else log.error('metrics message dead-lettered: its counts are lost', { ...summary(message), error: outcome.error });
    message.ack();
    settledUsage([message.body.id]);
  }
}
