/** Tag types and the tags on features. */
import { getDb } from '../../db/client';
import { pathParam } from '../../http/params';
import { empty, json } from '../../http/responses';
import { featureProject } from '../../auth/scopes';
import { CREATE_TAG_TYPE, UPDATE_FEATURE } from '../../auth/permissions';
import { admin, authenticated, route, type Route, type AdminContext } from '../../http/route';
import {
  CreateTagTypeSchema,
  TagSchema,
  type CreateTagTypeInput,
  type TagInput,
  GetTagTypesResponse,
  CreateTagType201Response,
  GetTagTypeResponse,
  ListTagsResponse,
  AddTag201Response,
  GetTagsResponse,
  GetTagsByTypeResponse,
} from './schema';
import * as service from './service';

export async function listTagTypes({ env }: AdminContext): Promise<Response> {
  return json(await service.listTagTypes(getDb(env)));
}

/** One tag type, as Unleash answers it; the target of the `location` that creating one sends. */
export async function getTagType({ request, env }: AdminContext): Promise<Response> {
  return json(await service.getTagType(getDb(env), pathParam(request, 'name')));
}

export async function createTagType({ env, principal, body }: AdminContext<CreateTagTypeInput>): Promise<Response> {
  const tagType = await service.createTagType(getDb(env), principal, body);
  return json(tagType, 201, { location: `/api/admin/tag-types/${encodeURIComponent(body.name)}` });
}

export async function listFeatureTags({ request, env }: AdminContext): Promise<Response> {
  return json(await service.listFeatureTags(getDb(env), pathParam(request, 'featureName')));
}

export async function addFeatureTag({ request, env, principal, body }: AdminContext<TagInput>): Promise<Response> {
  return json(await service.addFeatureTag(getDb(env), principal, pathParam(request, 'featureName'), body), 201);
}

export async function removeFeatureTag({ request, env, principal }: AdminContext): Promise<Response> {
  await service.removeFeatureTag(
    getDb(env),
    principal,
    pathParam(request, 'featureName'),
    pathParam(request, 'type'),
    pathParam(request, 'value'),
  );
  return empty(200);
}

/** Every tag value in use or created, as Unleash lists them (creation order). */
export async function listTags({ env }: AdminContext): Promise<Response> {
  return json(await service.listTags(getDb(env)));
}

/** The values of one tag type; an unknown type has none (Unleash answers an empty list too). */
export async function listTagsOfType({ request, env }: AdminContext): Promise<Response> {
  return json(await service.listTags(getDb(env), pathParam(request, 'type')));
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
