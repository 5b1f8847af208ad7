/** The rules of tag types and tags: existence checks, conflicts and their audit events. */
import { runBatch, type Db } from '../../db/client';
import { auditEvent, auditEvents, type Actor, type AuditEvent } from '../../db/events';
import { badRequest, conflict, notFound } from '../../http/errors';
import type { BulkTagsInput, CreateTagTypeInput, TagInput, UpdateTagsInput, UpdateTagTypeInput, ValidateTagTypeInput } from './schema';
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
  // 6.10.1 words this read's 404 differently from the writes' 'No feature flag found'.
  if (!(await store.findFeature(db, featureName))) throw notFound(`Could not find feature with name ${featureName}`);
  return { version: 1, tags: await store.featureTags(db, featureName) };
}

export async function addFeatureTag(db: Db, actor: Actor, featureName: string, body: TagInput) {
  const feature = await requireFeature(db, featureName);
  await runBatch(db, await tagChanges(db, actor, [feature], [body], []));
  return { type: body.type, value: body.value };
}

type Tag = { type: string; value: string };

/** The distinct tags of a list, first occurrence first. */
function distinct(list: readonly Tag[]): Tag[] {
  const seen = new Map<string, Tag>();
  for (const tag of list) seen.set(JSON.stringify([tag.type, tag.value]), seen.get(JSON.stringify([tag.type, tag.value])) ?? tag);
  return [...seen.values()];
}

/**
 * The statements that add `added` to each flag and then remove `removed` from each, creating
 * the tags that do not exist yet, with Unleash's events (tag-created, feature-tagged,
 * feature-untagged). A tag of an unknown type is a 400 and nothing is written.
 */
async function tagChanges(
  db: Db,
  actor: Actor,
  flags: readonly { name: string; project: string }[],
  added: readonly Tag[],
  removed: readonly Tag[],
) {
  const adds = distinct(added);
  const removes = distinct(removed);
  for (const type of new Set(adds.map((tag) => tag.type))) {
    if (!(await store.findTagType(db, type))) throw badRequest(`Tag type '${type}' does not exist`);
  }
  const existing = new Set((await store.existingTags(db, adds)).map((tag) => JSON.stringify([tag.type, tag.value])));
  const created = adds.filter((tag) => !existing.has(JSON.stringify([tag.type, tag.value])));
  const names = flags.map((flag) => flag.name);
  const events: AuditEvent[] = [
    ...created.map((tag) => ({ type: 'tag-created', data: { type: tag.type, value: tag.value } })),
    ...flags.flatMap((flag) =>
      adds.map((tag) => ({
        type: 'feature-tagged',
        project: flag.project,
        featureName: flag.name,
        data: { type: tag.type, value: tag.value },
      })),
    ),
    ...flags.flatMap((flag) =>
      removes.map((tag) => ({
        type: 'feature-untagged',
        project: flag.project,
        featureName: flag.name,
        preData: { type: tag.type, value: tag.value },
      })),
    ),
  ];
  return [
    ...store.insertTags(db, created),
    ...store.insertFeatureTags(
      db,
      flags.flatMap((flag) =>
        adds.map((tag) => ({ featureName: flag.name, tagType: tag.type, tagValue: tag.value, createdByUserId: actor.userId })),
      ),
    ),
    ...removes.flatMap((tag) => store.deleteFeatureTags(db, names, tag)),
    ...auditEvents(db, actor, events),
  ];
}

/** Adds and removes tags of one flag in one write (the UI's tag dialog); answers its tags. */
export async function updateFeatureTags(db: Db, actor: Actor, featureName: string, body: UpdateTagsInput) {
  const feature = await store.findFeature(db, featureName);
  if (!feature) throw notFound(body.addedTags.length > 0 ? 'No feature flag found' : `Could not find feature with name ${featureName}`);
  const statements = await tagChanges(db, actor, [feature], body.addedTags, body.removedTags);
  if (statements.length > 0) await runBatch(db, statements);
  return { version: 1, tags: await store.featureTags(db, feature.name) };
}

/** Adds and removes tags on several flags of one project, all or nothing. */
export async function bulkTagFeatures(db: Db, actor: Actor, project: string, body: BulkTagsInput) {
  const found = await store.findFeatures(db, body.features);
  const inProject = new Set(found.filter((flag) => flag.project === project).map((flag) => flag.name));
  const missing = [...new Set(body.features)].filter((name) => !inProject.has(name));
  if (missing.length > 0) throw notFound(`These feature flags do not exist in project ${project}: ${missing.join(', ')}`);
  const statements = await tagChanges(
    db,
    actor,
    found.filter((flag) => flag.project === project),
    body.tags.addedTags,
    body.tags.removedTags,
  );
  if (statements.length > 0) await runBatch(db, statements);
}

export async function createTag(db: Db, actor: Actor, body: TagInput) {
  if (!(await store.findTagType(db, body.type))) throw badRequest(`Tag type '${body.type}' does not exist`);
  if (await store.findTag(db, body.type, body.value)) {
    throw conflict(`A tag of type ${body.type} with the value ${body.value} already exists`);
  }
  const tag = { type: body.type, value: body.value };
  await runBatch(db, [store.insertTag(db, tag.type, tag.value), auditEvent(db, actor, { type: 'tag-created', data: tag })]);
  return { version: 1, tag };
}

export async function getTag(db: Db, type: string, value: string) {
  const tag = await store.findTag(db, type, value);
  if (!tag) throw notFound(`No tag with type: [${type}] and value [${value}]`);
  return { version: 1, tag };
}

/** Deletes a tag and its uses; like Unleash, deleting one that does not exist succeeds. */
export async function deleteTag(db: Db, actor: Actor, type: string, value: string) {
  await runBatch(db, [...store.deleteTag(db, type, value), auditEvent(db, actor, { type: 'tag-deleted', data: { type, value } })]);
}

/** Whether a tag type could be created: 409 when the name is taken; nothing is written. */
export async function validateTagType(db: Db, body: ValidateTagTypeInput) {
  if (await store.findTagType(db, body.name)) throw conflict(`There already exists a tag-type with the name ${body.name}`);
  return { valid: true, tagType: body };
}

export async function updateTagType(db: Db, actor: Actor, name: string, body: UpdateTagTypeInput) {
  if (!(await store.findTagType(db, name))) throw notFound('Could not find tag-type');
  const changes = Object.fromEntries(Object.entries(body).filter(([, value]) => value !== undefined)) as UpdateTagTypeInput;
  const statements = [auditEvent(db, actor, { type: 'tag-type-updated', data: { name, ...changes } })];
  await runBatch(db, Object.keys(changes).length > 0 ? [store.updateTagType(db, name, changes), ...statements] : statements);
}

export async function deleteTagType(db: Db, actor: Actor, name: string) {
  const row = await store.findTagType(db, name);
  if (!row) throw notFound('Could not find tag-type');
  await runBatch(db, [...store.deleteTagType(db, name), auditEvent(db, actor, { type: 'tag-type-deleted', preData: tagTypeShape(row) })]);
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
