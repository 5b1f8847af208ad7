/** Drizzle writes of a person's favourite flags and projects (one row per person and favourite). */
import { and, eq } from 'drizzle-orm';
import type { Db, Statement } from '../../db/client';
import { favoriteFeatures, favoriteProjects } from '../../db/schema';

export function setFeatureFavorite(db: Db, feature: string, userId: number, favorite: boolean): Statement {
  return favorite
    ? db.insert(favoriteFeatures).values({ feature, userId }).onConflictDoNothing()
    : db.delete(favoriteFeatures).where(and(eq(favoriteFeatures.feature, feature), eq(favoriteFeatures.userId, userId)));
}

export function setProjectFavorite(db: Db, project: string, userId: number, favorite: boolean): Statement {
  return favorite
    ? db.insert(favoriteProjects).values({ project, userId }).onConflictDoNothing()
    : db.delete(favoriteProjects).where(and(eq(favoriteProjects.project, project), eq(favoriteProjects.userId, userId)));
}
