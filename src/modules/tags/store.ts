/** The Drizzle queries of tag types, tags and the tags on features. */
import { and, asc, eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { featureTag, features, tagTypes, tags } from '../../db/schema';

export type TagTypeRow = typeof tagTypes.$inferSelect;
export interface TagTypeValues {
  name: string;
  description: string;
  icon: string | null;
  color: string | null;
}

export async function listTagTypes(db: Db): Promise<TagTypeRow[]> {
  return db.select().from(tagTypes).orderBy(asc(tagTypes.name));
}

export async function findTagType(db: Db, name: string): Promise<TagTypeRow | undefined> {
  const [row] = await db.select().from(tagTypes).where(eq(tagTypes.name, name)).limit(1);
  return row;
}

export function insertTagType(db: Db, tagType: TagTypeValues) {
  return db.insert(tagTypes).values(tagType);
}

export async function findFeature(db: Db, name: string): Promise<{ name: string; project: string } | undefined> {
  const [feature] = await db
    .select({ name: features.name, project: features.project })
    .from(features)
    .where(eq(features.name, name))
    .limit(1);
  return feature;
}

export async function featureTags(db: Db, featureName: string): Promise<{ value: string; type: string }[]> {
  return db
    .select({ value: featureTag.tagValue, type: featureTag.tagType })
    .from(featureTag)
    .where(eq(featureTag.featureName, featureName))
    .orderBy(sql`rowid`);
}

export function insertTag(db: Db, type: string, value: string) {
  return db.insert(tags).values({ type, value }).onConflictDoNothing();
}

export function insertFeatureTag(db: Db, featureName: string, type: string, value: string, userId: number) {
  return db.insert(featureTag).values({ featureName, tagType: type, tagValue: value, createdByUserId: userId }).onConflictDoNothing();
}

export function deleteFeatureTag(db: Db, featureName: string, type: string, value: string) {
  return db
    .delete(featureTag)
    .where(and(eq(featureTag.featureName, featureName), eq(featureTag.tagType, type), eq(featureTag.tagValue, value)));
}

/** Every tag value (of one type, if given), in creation order. */
export async function listTags(db: Db, type?: string): Promise<{ type: string; value: string }[]> {
  return db
    .select({ type: tags.type, value: tags.value })
    .from(tags)
    .where(type === undefined ? undefined : eq(tags.type, type))
    .orderBy(sql`rowid`);
}
