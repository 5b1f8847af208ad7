/** The Drizzle queries of tag types, tags and the tags on features. */
import { and, asc, eq, inArray, sql } from 'drizzle-orm';
import { chunkedInsert, chunksOf, D1_MAX_BOUND_PARAMETERS } from '../../db/chunk';
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

/** A flag's tags in the order they were added, each with its type's colour. */
export async function featureTags(db: Db, featureName: string): Promise<{ type: string; value: string; color: string | null }[]> {
  return db
    .select({ type: featureTag.tagType, value: featureTag.tagValue, color: tagTypes.color })
    .from(featureTag)
    .leftJoin(tagTypes, eq(tagTypes.name, featureTag.tagType))
    .where(eq(featureTag.featureName, featureName))
    .orderBy(sql`${featureTag}.rowid`);
}

export function insertTag(db: Db, type: string, value: string) {
  return db.insert(tags).values({ type, value }).onConflictDoNothing();
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

export async function findTag(db: Db, type: string, value: string): Promise<{ type: string; value: string } | undefined> {
  const [row] = await db
    .select({ type: tags.type, value: tags.value })
    .from(tags)
    .where(and(eq(tags.type, type), eq(tags.value, value)))
    .limit(1);
  return row;
}

/** Deletes a tag and every flag's use of it. */
export function deleteTag(db: Db, type: string, value: string) {
  return [
    db.delete(featureTag).where(and(eq(featureTag.tagType, type), eq(featureTag.tagValue, value))),
    db.delete(tags).where(and(eq(tags.type, type), eq(tags.value, value))),
  ];
}

export function updateTagType(db: Db, name: string, changes: Partial<Pick<TagTypeValues, 'description' | 'icon' | 'color'>>) {
  return db.update(tagTypes).set(changes).where(eq(tagTypes.name, name));
}

/** Deletes a tag type, its tags and every flag's use of them. */
export function deleteTagType(db: Db, name: string) {
  return [
    db.delete(featureTag).where(eq(featureTag.tagType, name)),
    db.delete(tags).where(eq(tags.type, name)),
    db.delete(tagTypes).where(eq(tagTypes.name, name)),
  ];
}

/** The flags of these names that exist, with their projects. */
export async function findFeatures(db: Db, names: readonly string[]): Promise<{ name: string; project: string }[]> {
  const found: { name: string; project: string }[] = [];
  for (const run of chunksOf([...new Set(names)], D1_MAX_BOUND_PARAMETERS - 1)) {
    found.push(...(await db.select({ name: features.name, project: features.project }).from(features).where(inArray(features.name, run))));
  }
  return found;
}

/** Of these tags, the ones that already exist. */
export async function existingTags(db: Db, list: readonly { type: string; value: string }[]) {
  const found: { type: string; value: string }[] = [];
  for (const tag of list) {
    const row = await findTag(db, tag.type, tag.value);
    if (row) found.push(row);
  }
  return found;
}

export function insertTags(db: Db, list: readonly { type: string; value: string }[]) {
  return chunkedInsert(list, 2, (run) => db.insert(tags).values(run).onConflictDoNothing());
}

export function insertFeatureTags(
  db: Db,
  rows: readonly { featureName: string; tagType: string; tagValue: string; createdByUserId: number }[],
) {
  return chunkedInsert(rows, 4, (run) => db.insert(featureTag).values(run).onConflictDoNothing());
}

export function deleteFeatureTags(db: Db, featureNames: readonly string[], tag: { type: string; value: string }) {
  return chunksOf(featureNames, D1_MAX_BOUND_PARAMETERS - 2).map((run) =>
    db
      .delete(featureTag)
      .where(and(eq(featureTag.tagType, tag.type), eq(featureTag.tagValue, tag.value), inArray(featureTag.featureName, run))),
  );
}
