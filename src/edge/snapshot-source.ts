/**
 * The snapshot source of Edge mode: the same `Snapshot` the service builds from D1
 * (sdk/client-api/snapshot.ts), built instead from what the upstream's `/api/client/features`
 * answered for one token scope. Everything downstream (client answers, the evaluator, the
 * frontend plans) reads a `Snapshot` and does not know where it came from.
 */
import { log } from '../log';
import { murmur3 } from '../sdk/evaluation/murmur';
import type { Constraint, Feature, Segment, Strategy } from '../sdk/evaluation/types';
import type { Snapshot, SnapshotFeature } from '../sdk/client-api/snapshot';

/** One token scope: an environment and the projects its tokens cover. */
export interface Scope {
  environment: string;
  projects: readonly string[];
}

/** The key of a scope; tokens with equal keys see exactly the same flags upstream. */
export function scopeKey(scope: Scope): string {
  const projects = scope.projects.includes('*') ? ['*'] : [...new Set(scope.projects)].sort();
  return `${scope.environment}:${projects.join(',')}`;
}

/** Whether `outer`'s flags include all of `inner`'s (same environment, a superset of projects). */
export function subsumes(outer: Scope, inner: Scope): boolean {
  if (outer.environment !== inner.environment) return false;
  if (outer.projects.includes('*')) return true;
  if (inner.projects.includes('*')) return false;
  return inner.projects.every((project) => outer.projects.includes(project));
}

interface UpstreamSegment {
  id: number;
  name?: string;
  constraints?: Constraint[] | null;
}

interface UpstreamFeature extends Feature {
  project?: string;
  strategies?: Strategy[];
}

interface UpstreamBody {
  features?: unknown;
  segments?: unknown;
  meta?: { revisionId?: unknown };
}

/**
 * The revision of an upstream answer: its `meta.revisionId` when it sends one (6.x and later),
 * else a number from its ETag. Only this isolate's caches compare it; a snapshot that moved
 * always gets another one.
 */
function revisionOf(body: UpstreamBody, etag: string | null, text: string): number {
  const id = body.meta?.revisionId;
  if (typeof id === 'number' && Number.isSafeInteger(id) && id >= 0) return id;
  return murmur3(etag ?? text);
}

function isFeature(value: unknown): value is UpstreamFeature {
  return typeof value === 'object' && value !== null && typeof (value as { name?: unknown }).name === 'string';
}

/**
 * A snapshot of one scope from the upstream's answer text. Features keep the upstream's own
 * JSON (its key order and any field it adds); the inlined form (SDKs without segment support)
 * appends each strategy's segment constraints, as Unleash does for such SDKs.
 */
export function snapshotFromUpstream(scope: Scope, text: string, etag: string | null): Snapshot {
  const body = JSON.parse(text) as UpstreamBody;
  const rawSegments = Array.isArray(body.segments) ? (body.segments as UpstreamSegment[]) : [];
  const segments: Segment[] = rawSegments
    .filter((segment) => typeof segment?.id === 'number')
    .map((segment) => ({ id: segment.id, constraints: Array.isArray(segment.constraints) ? segment.constraints : [] }));
  const constraintsOf = new Map(segments.map((segment) => [segment.id, segment.constraints]));
  const rawFeatures = Array.isArray(body.features) ? body.features : [];
  const features: SnapshotFeature[] = [];
  for (const raw of rawFeatures) {
    if (!isFeature(raw)) {
      log.warn('an upstream flag without a name was left out', { scope: scopeKey(scope) });
      continue;
    }
    const strategies = Array.isArray(raw.strategies) ? raw.strategies : [];
    const usesSegments = strategies.some((strategy) => Array.isArray(strategy.segments) && strategy.segments.length > 0);
    const jsonWithSegmentIds = JSON.stringify(raw);
    const jsonInlined = usesSegments
      ? JSON.stringify({
          ...raw,
          strategies: strategies.map(({ segments: ids, ...strategy }) => ({
            ...strategy,
            constraints: [...(strategy.constraints ?? []), ...(ids ?? []).flatMap((id) => constraintsOf.get(id) ?? [])],
          })),
        })
      : jsonWithSegmentIds;
    features.push({
      name: raw.name,
      project: typeof raw.project === 'string' ? raw.project : 'default',
      // Unleash Edge does not filter by tag either: the client API answers carry no tags.
      tags: new Set(),
      jsonWithSegmentIds,
      jsonInlined,
      definition: { ...raw, enabled: raw.enabled === true },
      impressionData: raw.impressionData === true,
    });
  }
  return {
    environment: scope.environment,
    revision: revisionOf(body, etag, text),
    features,
    byName: new Map(features.map((feature) => [feature.name, feature])),
    segments,
    segmentsJson: JSON.stringify(rawSegments),
    evaluators: new Map(),
  };
}
