/** The rules of tag types and tags: existence checks, conflicts and their audit events. */
import { runBatch, type Db } from '../../db/client';
import { auditEvent, type Actor } from '../../db/events';
import { conflict, notFound } from '../../http/errors';
import type { CreateTagTypeInput, TagInput } from './schema';
import * as store from './store';

function tagTypeShape(row: store.TagTypeRow) {
  return { name: row.name, description: row.description, icon: row.icon, color: row.color };
}

export async function listTagTypes(db: Db) {
  return { version: 1, tagTypes: (await store.listTagTypes(db)).map(tagTypeShape) };
}

export async function getTagType(db: Db, name: string) {
  const row = await store.findTagType(db, name);
  if (!row) throw notFound('Could not find tag-type');
  return { version: 1, tagType: tagTypeShape(row) };
}

export async function createTagType(db: Db, actor: Actor, body: CreateTagTypeInput) {
  if (await store.findTagType(db, body.name)) throw conflict(`There already exists a tag-type with the name ${body.name}`);
  const tagType = { name: body.name, description: body.description ?? '', icon: body.icon ?? null, color: body.color ?? null };
  await runBatch(db, [store.insertTagType(db, tagType), auditEvent(db, actor, { type: 'tag-type-created', data: tagType })]);
  return tagType;
}

async function requireFeature(db: Db, name: string) {
  const feature = await store.findFeature(db, name);
  if (!feature) throw notFound('No feature flag found');
  return feature;
}

export async function listFeatureTags(db: Db, featureName: string) {
  await requireFeature(db, featureName);
  return { version: 1, tags: await store.featureTags(db, featureName) };
}

export async function addFeatureTag(db: Db, actor: Actor, featureName: string, body: TagInput) {
  const feature = await requireFeature(db, featureName);
  if (!(await store.findTagType(db, body.type))) throw notFound(`Could not find tag type with name ${body.type}`);
  await runBatch(db, [
    store.insertTag(db, body.type, body.value),
    store.insertFeatureTag(db, feature.name, body.type, body.value, actor.userId),
    auditEvent(db, actor, {
      type: 'feature-tagged',
      project: feature.project,
      featureName: feature.name,
      data: { type: body.type, value: body.value },
    }),
  ]);
  return { type: body.type, value: body.value };
}

export async function removeFeatureTag(db: Db, actor: Actor, featureName: string, type: string, value: string) {
  const feature = await requireFeature(db, featureName);
  await runBatch(db, [
    store.deleteFeatureTag(db, feature.name, type, value),
    auditEvent(db, actor, { type: 'feature-untagged', project: feature.project, featureName: feature.name, preData: { type, value } }),
  ]);
}

export async function listTags(db: Db, type?: string) {
  return { version: 1, tags: await store.listTags(db, type) };
}
