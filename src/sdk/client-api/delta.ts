/**
 * Delta updates for SDKs (`/api/client/delta`, `/api/client/streaming`), in Unleash's event
 * shapes. Event ids are data revisions (audit event ids: integers that only go up).
 *
 * What changed comes from the `sdk_changes` log (a trigger on `events` writes it in the same
 * statement as each audit event); what a flag looks like now comes from the isolate's
 * snapshot. So a client behind by any number of writes to one flag gets that flag once, in
 * its current state, under the id of its latest change.
 *
 * The isolate keeps the recent log in memory (one D1 read per new revision, shared by every
 * client of the isolate), so an up-to-date poll costs no D1 read at all.
 */
import { and, asc, gt, lte } from 'drizzle-orm';
import { getDb } from '../../db/client';
import { sdkChanges } from '../../db/schema';
import type { Env } from '../../env';
import type { Snapshot, SnapshotFeature } from './snapshot';
import { revisionQuery } from './store';

interface ChangeRow {
  eventId: number;
  kind: 'feature' | 'segment' | 'all';
  featureName: string | null;
  project: string | null;
  environment: string | null;
  segmentId: number | null;
}

/** Which flags a delta client sees: its token's projects (undefined: all) and a name prefix. */
export interface DeltaQuery {
  project?: readonly string[];
  namePrefix?: string;
}

/** How much history an isolate keeps in memory; a client further behind is hydrated. */
const MAX_LOG_ROWS = 20_000;

// The isolate's copy of the log: every change with coveredFrom < eventId <= coveredTo.
let log: ChangeRow[] = [];
let coveredFrom = -1;
let coveredTo = -1;

/**
 * The log rows in (after, upTo], or 'behind' when the D1 replica answering has not yet seen
 * revision `upTo` (the snapshot may come from a newer replica): rows would be missing.
 */
async function readChanges(env: Env, after: number, upTo: number, limit: number): Promise<ChangeRow[] | 'behind'> {
  const db = getDb(env);
  const [revision, rows] = await db.batch([
    revisionQuery(db),
    db
      .select()
      .from(sdkChanges)
      .where(and(gt(sdkChanges.eventId, after), lte(sdkChanges.eventId, upTo)))
      .orderBy(asc(sdkChanges.eventId))
      .limit(limit),
  ]);
  return (revision[0]?.revision ?? 0) < upTo ? 'behind' : rows;
}

/** The first index in `log` whose eventId is greater than `eventId`. */
function indexAfter(eventId: number): number {
  let low = 0;
  let high = log.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (log[middle]!.eventId <= eventId) low = middle + 1;
    else high = middle;
  }
  return low;
}

/**
 * The changes after `after` up to `upTo` (a revision this isolate has a snapshot of),
 * `'too-old'` when there are more than the isolate keeps (the client is hydrated instead), or
 * `'behind'` when the replica read cannot see `upTo` yet.
 */
async function changesSince(env: Env, after: number, upTo: number): Promise<ChangeRow[] | 'too-old' | 'behind'> {
  if (after >= upTo) return [];
  if (coveredFrom < 0 || after < coveredFrom) {
    const rows = await readChanges(env, after, upTo, MAX_LOG_ROWS + 1);
    if (rows === 'behind') return rows;
    if (rows.length > MAX_LOG_ROWS) return 'too-old';
    // Another request may have moved the window meanwhile; keep the wider one.
    if (coveredFrom < 0 || after < coveredFrom) {
      log = rows;
      coveredFrom = after;
      coveredTo = upTo;
    }
    return rows;
  }
  if (upTo > coveredTo) {
    const from = coveredTo;
    const rows = await readChanges(env, from, upTo, MAX_LOG_ROWS + 1);
    if (rows === 'behind') return rows;
    if (coveredTo === from) {
      if (rows.length > MAX_LOG_ROWS) {
        log = [];
        coveredFrom = -1;
        coveredTo = -1;
        return 'too-old';
      }
      log = log.concat(rows);
      coveredTo = upTo;
      if (log.length > MAX_LOG_ROWS) {
        const dropped = log.length - MAX_LOG_ROWS;
        coveredFrom = log[dropped - 1]!.eventId;
        log = log.slice(dropped);
      }
    }
    // Trimmed past the client, or another request moved the window while this one read: again.
    if (after < coveredFrom || coveredTo < upTo) return changesSince(env, after, upTo);
  }
  return log.slice(indexAfter(after), indexAfter(upTo));
}

/** Test hook: forget the isolate's copy of the change log. */
export function forgetChangeLog(): void {
  log = [];
  coveredFrom = -1;
  coveredTo = -1;
}

function inQuery(query: DeltaQuery, name: string, project: string): boolean {
  if (query.namePrefix && !name.startsWith(query.namePrefix)) return false;
  return query.project === undefined || query.project.includes('*') || query.project.includes(project);
}

function visibleFeatures(snapshot: Snapshot, query: DeltaQuery): SnapshotFeature[] {
  return snapshot.features.filter((feature) => inQuery(query, feature.name, feature.project));
}

function segmentIdsOf(feature: SnapshotFeature): number[] {
  const ids: number[] = [];
  for (const strategy of feature.definition.strategies ?? []) {
    for (const id of strategy.segments ?? []) if (!ids.includes(id)) ids.push(id);
  }
  return ids;
}

/** The `hydration` event: every flag the query sees and every segment in use, at the snapshot's revision. */
export function hydrationEvent(snapshot: Snapshot, query: DeltaQuery): string {
  const features = visibleFeatures(snapshot, query).map((feature) => feature.jsonWithSegmentIds);
  return `{"eventId":${snapshot.revision},"type":"hydration","features":[${features.join(',')}],"segments":${snapshot.segmentsJson}}`;
}

export interface DeltaEvents {
  /** Serialised events, oldest first. */
  events: string[];
  /** The id of the last event: the client's next `If-None-Match` / `Last-Event-ID`. */
  lastEventId: number;
}

/**
 * The events that bring a client at revision `since` to the snapshot's revision, or null when
 * nothing it can see changed. A hydration when the client is unknown (`since` undefined), too
 * far behind, or when a change touched many flags at once (an import).
 */
export async function deltaSince(env: Env, snapshot: Snapshot, query: DeltaQuery, since: number | undefined): Promise<DeltaEvents | null> {
  const hydrate = (): DeltaEvents => ({ events: [hydrationEvent(snapshot, query)], lastEventId: snapshot.revision });
  if (since === undefined) return hydrate();
  if (since >= snapshot.revision) return null;
  const changes = await changesSince(env, since, snapshot.revision);
  if (changes === 'too-old') return hydrate();
  // The replica this request reads lags the snapshot: nothing now, the next poll or tick retries.
  if (changes === 'behind') return null;

  const featureChanges = new Map<string, { eventId: number; project: string | null }>();
  const segmentChanges = new Map<number, number>();
  for (const change of changes) {
    if (change.kind === 'all') return hydrate();
    if (change.kind === 'feature' && change.featureName !== null) {
      if (change.environment !== null && change.environment !== snapshot.environment) continue;
      featureChanges.set(change.featureName, { eventId: change.eventId, project: change.project });
    } else if (change.kind === 'segment' && change.segmentId !== null) {
      segmentChanges.set(change.segmentId, change.eventId);
    }
  }

  const segmentsById = new Map(snapshot.segments.map((segment) => [segment.id, segment]));
  const referenced = new Set(visibleFeatures(snapshot, query).flatMap(segmentIdsOf));
  const emittedSegments = new Set<number>();
  const events: { eventId: number; json: string }[] = [];
  for (const [segmentId, eventId] of segmentChanges) {
    const segment = segmentsById.get(segmentId);
    if (!segment) {
      events.push({ eventId, json: `{"eventId":${eventId},"type":"segment-removed","segmentId":${segmentId}}` });
    } else if (referenced.has(segmentId)) {
      emittedSegments.add(segmentId);
      events.push({ eventId, json: `{"eventId":${eventId},"type":"segment-updated","segment":${JSON.stringify(segment)}}` });
    }
  }
  for (const [name, { eventId, project }] of featureChanges) {
    const feature = snapshot.byName.get(name);
    if (feature && inQuery(query, feature.name, feature.project)) {
      // A flag may now use a segment the client has not been sent: send it first.
      for (const segmentId of segmentIdsOf(feature)) {
        const segment = segmentsById.get(segmentId);
        if (!segment || emittedSegments.has(segmentId)) continue;
        emittedSegments.add(segmentId);
        events.push({ eventId, json: `{"eventId":${eventId},"type":"segment-updated","segment":${JSON.stringify(segment)}}` });
      }
      events.push({ eventId, json: `{"eventId":${eventId},"type":"feature-updated","feature":${feature.jsonWithSegmentIds}}` });
    } else {
      // Gone (archived, deleted) or out of the query now: the client drops it if it has it.
      const removedProject = project ?? feature?.project ?? 'default';
      if (!inQuery(query, name, removedProject)) continue;
      events.push({
        eventId,
        json: `{"eventId":${eventId},"type":"feature-removed","featureName":${JSON.stringify(name)},"project":${JSON.stringify(removedProject)}}`,
      });
    }
  }
  if (events.length === 0) return null;
  // Stable: a segment sent for a flag stays just before it.
  events.sort((first, second) => first.eventId - second.eventId);
  return { events: events.map((event) => event.json), lastEventId: events[events.length - 1]!.eventId };
}

/** `{"events":[...]}`, the body of a delta response and the data of a streaming event. */
export function deltaBody(delta: DeltaEvents): string {
  return `{"events":[${delta.events.join(',')}]}`;
}

/**
 * The revision a client says it has: an `If-None-Match` ETag (`"42"`, `W/"42"` or `42`) or a
 * `Last-Event-ID`. Anything else (absent, a full-API ETag, garbage) means "unknown": hydrate.
 */
export function parseRevision(header: string | null): number | undefined {
  if (header === null) return undefined;
  const match = /^\s*(?:W\/)?"?(\d{1,10})"?\s*$/.exec(header);
  if (!match) return undefined;
  const revision = Number(match[1]);
  return revision <= 0xffffffff ? revision : undefined;
}
