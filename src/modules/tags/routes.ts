/** Tag types and the tags on features. */
import { and, asc, eq, sql } from 'drizzle-orm';
import * as v from 'valibot';
import { getDb, runBatch } from '../../db/client';
import { auditEvent } from '../../db/events';
import { featureTag, features, tagTypes, tags } from '../../db/schema';
import { conflict, notFound } from '../../http/errors';
import { readJsonBody } from '../../http/body';
import { pathParam } from '../../http/params';
import { empty, json } from '../../http/responses';
import { parseInput, text } from '../../http/validation';
import { urlFriendlyName } from '../../http/validation';
import { featureProject } from '../../auth/scopes';
import { CREATE_TAG_TYPE, UPDATE_FEATURE } from '../../auth/permissions';
import { admin, authenticated, route, type Route, type AdminContext } from '../../http/route';
import {
  GetTagTypesResponse,
  CreateTagType201Response,
  GetTagTypeResponse,
  ListTagsResponse,
  AddTag201Response,
  GetTagsResponse,
  GetTagsByTypeResponse,
} from './schema';

const CreateTagTypeSchema = v.object({
  name: urlFriendlyName(50, 2),
  description: v.optional(v.nullable(text(1000))),
  icon: v.optional(v.nullable(text(255))),
  color: v.optional(v.nullable(text(50))),
});

/** Tag values are 2 to 50 characters after trimming, as the seed's limits say. */
const TagSchema = v.object({
  type: urlFriendlyName(50, 2),
  value: v.pipe(
    text(200),
    v.trim(),
    v.minLength(2, 'must be at least 2 characters long'),
    v.maxLength(50, 'must be at most 50 characters long'),
  ),
});

export async function listTagTypes({ env }: AdminContext): Promise<Response> {
  const db = getDb(env);
  const rows = await db.select().from(tagTypes).orderBy(asc(tagTypes.name));
  return json({
    version: 1,
    tagTypes: rows.map((row) => ({ name: row.name, description: row.description, icon: row.icon, color: row.color })),
  });
}

/** One tag type, as Unleash answers it; the target of the `location` that creating one sends. */
export async function getTagType({ request, env }: AdminContext): Promise<Response> {
  const [row] = await getDb(env)
    .select()
    .from(tagTypes)
    .where(eq(tagTypes.name, pathParam(request, 'name')))
    .limit(1);
  if (!row) throw notFound('Could not find tag-type');
  return json({ version: 1, tagType: { name: row.name, description: row.description, icon: row.icon, color: row.color } });
}

export async function createTagType({
  request,
  env,
  principal,
  body,
}: AdminContext<v.InferOutput<typeof CreateTagTypeSchema>>): Promise<Response> {
  const db = getDb(env);
  const existing = await db.select({ name: tagTypes.name }).from(tagTypes).where(eq(tagTypes.name, body.name)).limit(1);
  if (existing.length > 0) throw conflict(`There already exists a tag-type with the name ${body.name}`);
  const tagType = { name: body.name, description: body.description ?? '', icon: body.icon ?? null, color: body.color ?? null };
  await runBatch(db, [db.insert(tagTypes).values(tagType), auditEvent(db, principal, { type: 'tag-type-created', data: tagType })]);
  return json(tagType, 201, { location: `/api/admin/tag-types/${encodeURIComponent(body.name)}` });
}

async function requireFeature(db: ReturnType<typeof getDb>, name: string) {
  const [feature] = await db
    .select({ name: features.name, project: features.project })
    .from(features)
    .where(eq(features.name, name))
    .limit(1);
  if (!feature) throw notFound('No feature flag found');
  return feature;
}

export async function listFeatureTags({ request, env }: AdminContext): Promise<Response> {
  const db = getDb(env);
  const name = pathParam(request, 'featureName');
  await requireFeature(db, name);
  const rows = await db
    .select({ value: featureTag.tagValue, type: featureTag.tagType })
    .from(featureTag)
    .where(eq(featureTag.featureName, name))
    .orderBy(sql`rowid`);
  return json({ version: 1, tags: rows });
}

export async function addFeatureTag({ request, env, principal, body }: AdminContext<v.InferOutput<typeof TagSchema>>): Promise<Response> {
  const db = getDb(env);
  const feature = await requireFeature(db, pathParam(request, 'featureName'));
  const tagType = await db.select({ name: tagTypes.name }).from(tagTypes).where(eq(tagTypes.name, body.type)).limit(1);
  if (tagType.length === 0) throw notFound(`Could not find tag type with name ${body.type}`);
  await runBatch(db, [
    db.insert(tags).values({ type: body.type, value: body.value }).onConflictDoNothing(),
    db
      .insert(featureTag)
      .values({ featureName: feature.name, tagType: body.type, tagValue: body.value, createdByUserId: principal.userId })
      .onConflictDoNothing(),
    auditEvent(db, principal, {
      type: 'feature-tagged',
      project: feature.project,
      featureName: feature.name,
      data: { type: body.type, value: body.value },
    }),
  ]);
  return json({ type: body.type, value: body.value }, 201);
}

export async function removeFeatureTag({ request, env, principal }: AdminContext): Promise<Response> {
  const db = getDb(env);
  const feature = await requireFeature(db, pathParam(request, 'featureName'));
  const type = pathParam(request, 'type');
  const value = pathParam(request, 'value');
  await runBatch(db, [
    db
      .delete(featureTag)
      .where(and(eq(featureTag.featureName, feature.name), eq(featureTag.tagType, type), eq(featureTag.tagValue, value))),
    auditEvent(db, principal, { type: 'feature-untagged', project: feature.project, featureName: feature.name, preData: { type, value } }),
  ]);
  return empty(200);
}

/** Every tag value in use or created, as Unleash lists them (creation order). */
export async function listTags({ env }: AdminContext): Promise<Response> {
  const rows = await getDb(env)
    .select({ type: tags.type, value: tags.value })
    .from(tags)
    .orderBy(sql`rowid`);
  return json({ version: 1, tags: rows });
}

/** The values of one tag type; an unknown type has none (Unleash answers an empty list too). */
export async function listTagsOfType({ request, env }: AdminContext): Promise<Response> {
  const type = pathParam(request, 'type');
  const rows = await getDb(env)
    .select({ type: tags.type, value: tags.value })
    .from(tags)
    .where(eq(tags.type, type))
    .orderBy(sql`rowid`);
  return json({ version: 1, tags: rows });
}

export const routes: Route[] = [
  route({
    method: 'GET',
    path: '/api/admin/tag-types',
    access: authenticated(),
    tag: 'Tags',
    operationId: 'getTagTypes',
    summary: 'List tag types',
    responses: { 200: { description: 'Success', schema: GetTagTypesResponse } },
    handler: listTagTypes,
  }),
  route({
    method: 'POST',
    path: '/api/admin/tag-types',
    access: admin(CREATE_TAG_TYPE),
    tag: 'Tags',
    operationId: 'createTagType',
    summary: 'Create a tag type',
    body: CreateTagTypeSchema,
    responses: { 201: { description: 'Created', schema: CreateTagType201Response } },
    errors: [400, 409, 413],
    handler: createTagType,
  }),
  route({
    method: 'GET',
    path: '/api/admin/tag-types/:name',
    access: authenticated(),
    tag: 'Tags',
    operationId: 'getTagType',
    summary: 'Get a tag type',
    responses: { 200: { description: 'Success', schema: GetTagTypeResponse } },
    errors: [400, 404],
    handler: getTagType,
  }),
  route({
    method: 'GET',
    path: '/api/admin/features/:featureName/tags',
    access: authenticated(),
    tag: 'Features',
    operationId: 'listTags',
    summary: "List a flag's tags",
    responses: { 200: { description: 'Success', schema: ListTagsResponse } },
    errors: [400, 404],
    handler: listFeatureTags,
  }),
  route({
    method: 'POST',
    path: '/api/admin/features/:featureName/tags',
    access: admin(UPDATE_FEATURE, featureProject('featureName')),
    tag: 'Features',
    operationId: 'addTag',
    summary: 'Tag a feature flag',
    body: TagSchema,
    responses: { 201: { description: 'Created', schema: AddTag201Response } },
    errors: [400, 403, 404, 413],
    handler: addFeatureTag,
  }),
  route({
    method: 'DELETE',
    path: '/api/admin/features/:featureName/tags/:type/:value',
    access: admin(UPDATE_FEATURE, featureProject('featureName')),
    tag: 'Features',
    operationId: 'removeTag',
    summary: 'Remove a tag from a feature flag',
    responses: { 200: { description: 'Success', schema: null } },
    errors: [400, 404],
    handler: removeFeatureTag,
  }),
  route({
    method: 'GET',
    path: '/api/admin/tags',
    access: authenticated(),
    tag: 'Tags',
    operationId: 'getTags',
    summary: 'List every tag',
    responses: { 200: { description: 'Success', schema: GetTagsResponse } },
    handler: listTags,
  }),
  route({
    method: 'GET',
    path: '/api/admin/tags/:type',
    access: authenticated(),
    tag: 'Tags',
    operationId: 'getTagsByType',
    summary: 'List the tags of one type',
    responses: { 200: { description: 'Success', schema: GetTagsByTypeResponse } },
    errors: [400],
    handler: listTagsOfType,
  }),
];
