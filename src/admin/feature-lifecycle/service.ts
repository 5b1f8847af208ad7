/**
 * A flag's lifecycle (Unleash's feature lifecycle): the stages it went through, marking it
 * completed (kept or discarded) and taking that back, and how many flags are in each stage.
 * Creation enters `initial` and archiving `archived` (features/).
 */
import type { Db } from '../../db/client';
import { runBatch } from '../../db/client';
import { auditEvent, type Actor } from '../../db/events';
import { findFeature, requireFeature } from '../features/service';
import * as store from './store';

/** A flag's stages; an unknown flag has none (200 `[]`, as 6.10.1 answers it). */
export async function getLifecycle(db: Db, name: string) {
  const rows = await store.stagesOf(db, name);
  return rows.map((row) => ({ stage: row.stage, ...(row.status ? { status: row.status } : {}), enteredStageAt: row.createdAt }));
}

export async function completeFeature(
  db: Db,
  actor: Actor,
  projectId: string,
  name: string,
  status: 'kept' | 'discarded',
  statusValue: string | null,
) {
  const feature = await requireFeature(db, projectId, name);
  await runBatch(db, [
    store.complete(db, name, status, statusValue, new Date().toISOString()),
    auditEvent(db, actor, { type: 'feature-completed', project: feature.project, featureName: name, data: { status, statusValue } }),
  ]);
}

/**
 * Takes back a flag's `completed` stage. Unleash answers 200 whatever the flag; we write (the
 * stage removal and `feature-uncompleted`) only for a flag of this project.
 */
export async function uncompleteFeature(db: Db, actor: Actor, projectId: string, name: string) {
  const feature = await findFeature(db, name);
  if (!feature || feature.project !== projectId) return;
  await runBatch(db, [
    store.uncomplete(db, name),
    auditEvent(db, actor, { type: 'feature-uncompleted', project: projectId, featureName: name }),
  ]);
}

/** How many flags are in each lifecycle stage, every stage named even at zero. */
export async function lifecycleCount(db: Db) {
  const counts = { initial: 0, preLive: 0, live: 0, completed: 0, archived: 0 };
  for (const row of await store.stageCounts(db)) {
    const key = row.stage === 'pre-live' ? 'preLive' : row.stage;
    if (key in counts) counts[key as keyof typeof counts] = row.count;
  }
  return counts;
}
