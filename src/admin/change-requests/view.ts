/** Change requests as the UI reads them: each with its changes by flag, reviews, comments and conflicts. */
import type { Db } from '../../db/client';
import { notFound } from '../../http/errors';
import { conflictOf } from './changes';
import type { ChangeRequestState } from './schema';
import * as store from './store';

interface Person {
  id: number;
  username: string;
  imageUrl: string | null;
}

const ADMIN_TOKEN_PERSON = 'Admin token';

async function peopleById(db: Db, ids: readonly number[]): Promise<Map<number, Person>> {
  const known = [...new Set(ids)].filter((id) => id > 0);
  const rows = known.length === 0 ? [] : await store.people(db, known);
  const map = new Map<number, Person>();
  for (const row of rows)
    map.set(row.id, { id: row.id, username: row.username ?? row.email ?? row.name ?? `user ${row.id}`, imageUrl: row.imageUrl });
  return map;
}

function person(map: Map<number, Person>, id: number, fallbackName?: string): Person {
  return map.get(id) ?? { id, username: fallbackName ?? ADMIN_TOKEN_PERSON, imageUrl: null };
}

interface DescribedChange {
  id: number;
  action: string;
  payload: Record<string, unknown>;
  conflict?: string;
  createdBy: Person;
  createdAt: string;
}

/** The full view of some requests (conflicts computed for the open ones only: a closed one has nothing left to apply). */
export async function describe(db: Db, rows: readonly store.ChangeRequestRow[]) {
  if (rows.length === 0) return [];
  const ids = rows.map((row) => row.id);
  const [changes, reviews, comments] = await Promise.all([store.changesOf(db, ids), store.reviewsOf(db, ids), store.commentsOf(db, ids)]);
  const map = await peopleById(db, [
    ...rows.map((row) => row.createdByUserId),
    ...changes.map((change) => change.createdByUserId),
    ...reviews.map((review) => review.userId),
    ...comments.map((comment) => comment.createdByUserId),
  ]);
  const described = [];
  for (const row of rows) {
    const open = !['Applied', 'Rejected', 'Cancelled'].includes(row.state);
    const features: { name: string; conflict?: string; changes: DescribedChange[] }[] = [];
    const segments: (DescribedChange & { name: string })[] = [];
    for (const change of changes.filter((candidate) => candidate.changeRequestId === row.id)) {
      const target = { project: row.project, environment: row.environment, feature: change.feature };
      const conflict = open ? await conflictOf(db, target, change.action, change.payload, change.base) : undefined;
      const described = {
        id: change.id,
        action: change.action,
        payload: change.payload,
        ...(conflict ? { conflict } : {}),
        createdBy: person(map, change.createdByUserId, row.createdByName),
        createdAt: change.createdAt,
      };
      // A segment's change has no flag: the UI lists it under the request's segments.
      if (change.feature === '') {
        segments.push({ ...described, name: String(change.payload.name ?? '') });
        continue;
      }
      let feature = features.find((candidate) => candidate.name === change.feature);
      if (!feature) features.push((feature = { name: change.feature, changes: [] }));
      feature.changes.push(described);
    }
    const verdicts = (verdict: string) =>
      reviews
        .filter((review) => review.changeRequestId === row.id && review.verdict === verdict)
        .map((review) => ({ createdBy: person(map, review.userId), createdAt: review.createdAt }));
    described.push({
      id: row.id,
      title: row.title ?? `Change request #${row.id}`,
      project: row.project,
      environment: row.environment,
      state: row.state as ChangeRequestState,
      minApprovals: row.minApprovals,
      createdBy: person(map, row.createdByUserId, row.createdByName),
      createdAt: row.createdAt,
      features,
      segments,
      approvals: verdicts('approved'),
      rejections: verdicts('rejected'),
      comments: comments
        .filter((comment) => comment.changeRequestId === row.id)
        .map((comment) => {
          const { username, imageUrl } = person(map, comment.createdByUserId, comment.createdByName);
          return { id: comment.id, text: comment.text, createdBy: { username, imageUrl }, createdAt: comment.createdAt };
        }),
      stateTimestamps: row.stateTimestamps,
      ...(row.scheduledAt && row.scheduleStatus
        ? {
            schedule: {
              status: row.scheduleStatus as 'pending' | 'failed',
              scheduledAt: row.scheduledAt,
              ...(row.scheduleStatus === 'failed' ? { failureReason: row.scheduleFailure, reason: row.scheduleFailure ?? 'failed' } : {}),
            },
          }
        : {}),
    });
  }
  return described;
}

/** The request, which must be in `project` (404 otherwise, as for any id the caller cannot see there). */
export async function requireRequest(db: Db, project: string, id: number) {
  const row = Number.isSafeInteger(id) && id > 0 ? await store.findRequest(db, id) : undefined;
  if (!row || row.project !== project) throw notFound(`Could not find change request with id ${id}`);
  return row;
}

export async function describeOne(db: Db, row: store.ChangeRequestRow) {
  const [described] = await describe(db, [row]);
  if (!described) throw notFound(`Could not find change request with id ${row.id}`);
  return described;
}
