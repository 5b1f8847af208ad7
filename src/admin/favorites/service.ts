/**
 * A person's favourite flags and projects (Unleash's favorites), kept per calling principal's
 * user id; the lists and overviews show them to that person only.
 */
import type { Db } from '../../db/client';
import { runBatch } from '../../db/client';
import { auditEvent, type Actor } from '../../db/events';
import { requireActiveProject, requireFeature } from '../features/service';
import * as store from './store';

export async function setFeatureFavorite(db: Db, actor: Actor, projectId: string, name: string, favorite: boolean) {
  const feature = await requireFeature(db, projectId, name, true);
  await runBatch(db, [
    store.setFeatureFavorite(db, name, actor.userId, favorite),
    auditEvent(db, actor, { type: favorite ? 'feature-favorited' : 'feature-unfavorited', project: feature.project, featureName: name }),
  ]);
}

export async function setProjectFavorite(db: Db, actor: Actor, projectId: string, favorite: boolean) {
  if (favorite) await requireActiveProject(db, projectId);
  await runBatch(db, [
    store.setProjectFavorite(db, projectId, actor.userId, favorite),
    auditEvent(db, actor, {
      type: favorite ? 'project-favorited' : 'project-unfavorited',
      project: projectId,
      data: { project: projectId },
    }),
  ]);
}
