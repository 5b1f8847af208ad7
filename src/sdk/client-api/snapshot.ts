/**
 * The per-environment flag configuration as SDKs see it, built once per data revision and
 * kept in the isolate. Each feature is serialised ahead of time in both segment modes, so a
 * request only filters and concatenates.
 *
 * Freshness: the revision (highest events.id) is read from D1 at most once per
 * `SDK_REVISION_CHECK_MS` (default 1000 ms, Unleash's own revision tick) per isolate, so a
 * flag change reaches every SDK response within that bound plus one D1 read.
 */
import type { ConstraintDoc } from '../../db/schema';
import { getDb } from '../../db/client';
import { forgetRevision, localWriteCount, noteReadFailed, noteRevisionSeen, recordRevisionRead, revisionIfFresh } from '../../db/coherence';
import type { Env } from '../../env';
import { log } from '../../log';
import { BoundedMap } from '../../lib/bounded-map';
import { Evaluator } from '../evaluation/engine';
import type { Constraint, Feature, Segment, Strategy } from '../evaluation/types';
import { readEnvironmentRows, readRevision, type EnvironmentRows } from './store';

const MAX_ENVIRONMENTS = 32;

export interface SnapshotFeature {
  name: string;
  project: string;
  /** `type:value` of each tag. */
  tags: ReadonlySet<string>;
  /** Client-API JSON with strategy segment ids (clients announcing spec ≥ 4.2.0). */
  jsonWithSegmentIds: string;
  /** Client-API JSON with segment constraints appended to strategy constraints. */
  jsonInlined: string;
  definition: Feature;
  impressionData: boolean;
}

export interface ScopedEvaluator {
  evaluator: Evaluator;
  features: readonly SnapshotFeature[];
}

export interface Snapshot {
  environment: string;
  revision: number;
  features: readonly SnapshotFeature[];
  byName: ReadonlyMap<string, SnapshotFeature>;
  segments: readonly Segment[];
  segmentsJson: string;
  /** Evaluators per project scope, with the features that scope sees, made on first use. */
  evaluators: Map<string, ScopedEvaluator>;
}

/** Strategy parameters are strings on the wire, whatever was stored. */
function stringParameters(parameters: Record<string, unknown> | null): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(parameters ?? {})) {
    out[key] =
      typeof value === 'string'
        ? value
        : value === null || value === undefined
          ? ''
          : typeof value === 'object'
            ? JSON.stringify(value)
            : String(value);
  }
  return out;
}

function buildSnapshot(environment: string, rows: EnvironmentRows): Snapshot {
  const segmentConstraints = new Map<number, ConstraintDoc[]>(rows.segmentRows.map((row) => [row.id, row.constraints ?? []]));
  const segmentsOfStrategy = new Map<string, number[]>();
  for (const row of rows.strategySegmentRows) {
    const list = segmentsOfStrategy.get(row.strategyId) ?? [];
    list.push(row.segmentId);
    segmentsOfStrategy.set(row.strategyId, list);
  }
  const strategiesOf = new Map<string, { withIds: Strategy; inlined: Strategy }[]>();
  for (const row of rows.strategyRows) {
    const constraints: Constraint[] = row.constraints ?? [];
    const parameters = stringParameters(row.parameters);
    const variants = row.variants ?? [];
    const segmentIds = segmentsOfStrategy.get(row.id);
    const withIds: Strategy = { name: row.name, constraints, parameters, variants, ...(segmentIds ? { segments: segmentIds } : {}) };
    const inlined: Strategy = {
      name: row.name,
      constraints: [...constraints, ...(segmentIds ?? []).flatMap((id) => segmentConstraints.get(id) ?? [])],
      parameters,
      variants,
    };
    const list = strategiesOf.get(row.featureName) ?? [];
    list.push({ withIds, inlined });
    strategiesOf.set(row.featureName, list);
  }
  const environmentOf = new Map(rows.environmentRows.map((row) => [row.featureName, row]));
  const parentsOf = new Map<string, { feature: string; enabled: boolean; variants?: string[] }[]>();
  for (const row of rows.dependencyRows) {
    const list = parentsOf.get(row.child) ?? [];
    list.push({ feature: row.parent, enabled: row.enabled, ...(row.enabled ? { variants: row.variants ?? [] } : {}) });
    parentsOf.set(row.child, list);
  }
  const tagsOf = new Map<string, Set<string>>();
  for (const row of rows.tagRows) {
    const set = tagsOf.get(row.featureName) ?? new Set<string>();
    set.add(`${row.type}:${row.value}`);
    tagsOf.set(row.featureName, set);
  }

  const features = rows.featureRows.map((row): SnapshotFeature => {
    const featureEnvironment = environmentOf.get(row.name);
    const strategies = strategiesOf.get(row.name) ?? [];
    const dependencies = parentsOf.get(row.name);
    // Key order as Unleash 6 serialises a client feature.
    const base = (strategyList: Strategy[]) => ({
      name: row.name,
      type: row.type,
      enabled: rows.environmentEnabled && (featureEnvironment?.enabled ?? false),
      project: row.project,
      stale: row.stale,
      strategies: strategyList,
      variants: featureEnvironment?.variants ?? [],
      description: row.description,
      impressionData: row.impressionData,
      ...(dependencies ? { dependencies } : {}),
    });
    const withIds = base(strategies.map((strategy) => strategy.withIds));
    const jsonWithSegmentIds = JSON.stringify(withIds);
    // Without segments both forms are the same text: keep one string, not two.
    const usesSegments = strategies.some((strategy) => strategy.withIds.segments !== undefined);
    return {
      name: row.name,
      project: row.project,
      tags: tagsOf.get(row.name) ?? new Set(),
      jsonWithSegmentIds,
      jsonInlined: usesSegments ? JSON.stringify(base(strategies.map((strategy) => strategy.inlined))) : jsonWithSegmentIds,
      definition: withIds,
      impressionData: row.impressionData,
    };
  });
  const segments = rows.segmentRows.map((row) => ({ id: row.id, name: row.name, constraints: row.constraints ?? [] }));
  return {
    environment,
    revision: rows.revision,
    features,
    byName: new Map(features.map((feature) => [feature.name, feature])),
    segments,
    segmentsJson: JSON.stringify(segments),
    evaluators: new Map(),
  };
}

const snapshots = new BoundedMap<string, Snapshot>({ entries: MAX_ENVIRONMENTS });

/**
 * The revision read under way in this isolate, and `localWriteCount()` when it began. When
 * the tick passes, every request in flight would read the revision; they share this one read
 * instead, unless a local write finished (or a bookmark was sent) since it began: such a read
 * may predate that write, so the request makes its own (read-your-writes).
 */
let pendingRead: { promise: Promise<number>; writes: number } | undefined;
/**
 * How long a request waits for a read another request began before reading itself. That
 * read is the other request's I/O: should that request be cancelled (its client went away),
 * the read may never finish, and a request sharing it must not wait for ever.
 */
const SHARED_READ_WAIT_MS = 1000;
let revisionReads = 0;

function readRevisionOnce(env: Env, now: number, writes: number): Promise<number> {
  revisionReads++;
  const entry = { promise: readRevision(getDb(env)).then((revision) => recordRevisionRead(revision, now, writes)), writes };
  pendingRead = entry;
  const done = () => {
    if (pendingRead === entry) pendingRead = undefined;
  };
  entry.promise.then(done, done);
  return entry.promise;
}

/** The shared read's answer, or undefined when it took longer than SHARED_READ_WAIT_MS. */
async function joinRead(shared: Promise<number>): Promise<number | undefined> {
  let timer: ReturnType<typeof setTimeout> | null = null;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), SHARED_READ_WAIT_MS);
  });
  try {
    return await Promise.race([shared, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The latest data revision, read from D1 at most once per check interval in this isolate, and
 * at once after this isolate wrote (read-your-writes). A read that began before a local write
 * finished does not count as a check, since it may predate that write. Concurrent requests
 * share one read begun after the same local writes (`pendingRead`).
 */
export async function currentRevision(env: Env): Promise<number> {
  const now = Date.now();
  const fresh = revisionIfFresh(env, now);
  if (fresh >= 0) return fresh;
  const writes = localWriteCount();
  const pending = pendingRead;
  if (pending !== undefined && pending.writes === writes) {
    const shared = await joinRead(pending.promise);
    if (shared !== undefined) return shared;
    return readRevisionOnce(env, Date.now(), localWriteCount());
  }
  return readRevisionOnce(env, now, writes);
}

/** How many times this isolate read the revision from D1 (tests). */
export function revisionReadCount(): number {
  return revisionReads;
}

/**
 * The snapshot of an environment at the current revision (rebuilt when a write happened).
 * When D1 cannot be read, a snapshot this isolate already has is served rather than an
 * error: SDKs are better off with slightly old flags than with none.
 */
export async function snapshotFor(env: Env, environment: string): Promise<Snapshot> {
  const cached = snapshots.get(environment);
  let rows: EnvironmentRows;
  try {
    const revision = await currentRevision(env);
    if (cached && cached.revision >= revision) return cached;
    rows = await readEnvironmentRows(getDb(env), environment);
  } catch (error) {
    noteReadFailed();
    if (!cached) throw error;
    log.warn('serving the cached SDK payload: D1 read failed', { environment, revision: cached.revision, error });
    return cached;
  }
  // A lagging read replica may answer with an older revision than one already served: keep
  // serving the newer snapshot rather than going back in time.
  if (cached && rows.revision <= cached.revision) return cached;
  const snapshot = buildSnapshot(environment, rows);
  snapshots.set(environment, snapshot);
  noteRevisionSeen(snapshot.revision);
  return snapshot;
}

/** Whether a token scope covers a project. */
export function inScope(projects: readonly string[], project: string): boolean {
  return projects.includes('*') || projects.includes(project);
}

/**
 * The evaluator over the features a project scope may see, and those features, shared by
 * requests of that scope at this snapshot (the features are filtered once, not per call).
 */
export function evaluatorFor(snapshot: Snapshot, projects: readonly string[]): ScopedEvaluator {
  const key = projects.includes('*') ? '*' : [...projects].sort().join('\u0000');
  let scoped = snapshot.evaluators.get(key);
  if (!scoped) {
    const features = key === '*' ? snapshot.features : snapshot.features.filter((feature) => inScope(projects, feature.project));
    scoped = {
      evaluator: new Evaluator(
        features.map((feature) => feature.definition),
        snapshot.segments,
      ),
      features,
    };
    if (snapshot.evaluators.size >= 64) snapshot.evaluators.clear();
    snapshot.evaluators.set(key, scoped);
  }
  return scoped;
}

/** Test hook: forget everything this isolate cached. */
export function forgetSnapshots(): void {
  snapshots.clear();
  pendingRead = undefined;
  forgetRevision();
}
