/**
 * `/api/client/streaming` in Edge mode: the service's event stream (sdk/client-api/streaming.ts),
 * fed from the upstream's snapshot of the caller's scope instead of D1. Each connection looks at
 * `snapshotForToken` every EDGE_CHECK_MS (the isolate's cache asks the sync object whether the
 * scope's snapshot moved), so an upstream change reaches open streams within a check after the
 * sync object has it: at once on the upstream's webhook, else at its next poll.
 */
import type { Env } from '../env';
import { effectiveQuery } from '../sdk/client-api/routes';
import { hydrationEvent, parseRevision, type DeltaEvents, type DeltaQuery } from '../sdk/client-api/delta';
import type { Snapshot } from '../sdk/client-api/snapshot';
import { openStream } from '../sdk/client-api/streaming';
import { checkMs, snapshotForToken } from './scope';
import type { UpstreamToken } from './upstream';

/**
 * Edge keeps no log of its upstream's changes, only the snapshot a poll brought: a client not at
 * the snapshot's revision gets a hydration (an event every delta SDK takes at any time), one at
 * it gets nothing. Revisions are compared for equality: without `meta.revisionId` they are hashes.
 */
function hydrationUnlessAt(snapshot: Snapshot, query: DeltaQuery, since: number | undefined): DeltaEvents | null {
  if (since === snapshot.revision) return null;
  return { events: [hydrationEvent(snapshot, query)], lastEventId: snapshot.revision };
}

/** The stream of a backend token the upstream accepts (the caller checked it), scoped to its projects. */
export function streamForToken(request: Request, env: Env, ctx: ExecutionContext, secret: string, token: UpstreamToken): Promise<Response> {
  const scope = effectiveQuery(new URL(request.url).searchParams, token, false);
  const query: DeltaQuery = {
    ...(scope.project ? { project: scope.project } : {}),
    ...(scope.namePrefix ? { namePrefix: scope.namePrefix } : {}),
  };
  return openStream(
    ctx,
    {
      snapshot: async () => (await snapshotForToken(env, secret, token)).snapshot,
      eventsSince: async (snapshot, since) => hydrationUnlessAt(snapshot, query, since),
      checkMs: () => checkMs(env),
    },
    parseRevision(request.headers.get('last-event-id')),
  );
}
