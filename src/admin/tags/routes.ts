/** Tag types and the tags on features. */
import { getDb } from '../../db/client';
import { empty, json } from '../../http/responses';
import { featureProject } from '../../auth/scopes';
import { CREATE_TAG_TYPE, DELETE_TAG_TYPE, UPDATE_FEATURE, UPDATE_TAG_TYPE } from '../../auth/permissions';
import { admin, authenticated, route, type Route } from '../../http/route';
import {
  CreateTagTypeSchema,
  BulkTagsSchema,
  UpdateTagsSchema,
  UpdateTagTypeSchema,
  ValidateTagTypeSchema,
  TagWithVersionResponse,
  ValidateTagTypeResponse,
  TagSchema,
  GetTagTypesResponse,
  CreateTagType201Response,
  GetTagTypeResponse,
  ListTagsResponse,
  AddTag201Response,
  GetTagsResponse,
  GetTagsByTypeResponse,
} from './schema';
import * as service from './service';

export const routes: Route[] = [
  route({
    method: 'GET',
    path: '/api/admin/tag-types',
    access: authenticated(),
    tag: 'Tags',
    operationId: 'getTagTypes',
    summary: 'List tag types',
    responses: { 200: { description: 'Success', schema: GetTagTypesResponse } },
    handler: async ({ env }) => json(await service.listTagTypes(getDb(env))),
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
    handler: async ({ env, principal, body }) => {
      const tagType = await service.createTagType(getDb(env), principal, body);
      return json(tagType, 201, { location: `/api/admin/tag-types/${encodeURIComponent(body.name)}` });
    },
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
    /** One tag type, as Unleash answers it; the target of the `location` that creating one sends. */
    handler: async ({ env, params }) => json(await service.getTagType(getDb(env), params.name)),
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
    handler: async ({ env, params }) => json(await service.listFeatureTags(getDb(env), params.featureName)),
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
    handler: async ({ env, principal, body, params }) =>
      json(await service.addFeatureTag(getDb(env), principal, params.featureName, body), 201),
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
    handler: async ({ env, principal, params }) => {
      await service.removeFeatureTag(getDb(env), principal, params.featureName, params.type, params.value);
      return empty(200);
    },
  }),
  route({
    method: 'GET',
    path: '/api/admin/tags',
    access: authenticated(),
    tag: 'Tags',
    operationId: 'getTags',
    summary: 'List every tag',
    responses: { 200: { description: 'Success', schema: GetTagsResponse } },
    /** Every tag value in use or created, as Unleash lists them (creation order). */
    handler: async ({ env }) => json(await service.listTags(getDb(env))),
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
    /** The values of one tag type; an unknown type has none (Unleash answers an empty list too). */
    handler: async ({ env, params }) => json(await service.listTags(getDb(env), params.type)),
  }),
  route({
    method: 'PUT',
    path: '/api/admin/features/:featureName/tags',
    access: admin(UPDATE_FEATURE, featureProject('featureName')),
    tag: 'Features',
    operationId: 'updateTags',
    summary: "Add and remove a flag's tags in one call",
    body: UpdateTagsSchema,
    responses: { 200: { description: "The flag's tags after the change", schema: ListTagsResponse } },
    errors: [400, 401, 403, 404, 413, 415],
    handler: async ({ env, principal, body, params }) =>
      json(await service.updateFeatureTags(getDb(env), principal, params.featureName, body)),
  }),
  route({
    method: 'PUT',
    path: '/api/admin/projects/:projectId/tags',
    access: admin(UPDATE_FEATURE, ({ params }) => ({ project: params.projectId })),
    tag: 'Tags',
    operationId: 'addTagToFeatures',
    summary: 'Add and remove tags on several flags of a project',
    body: BulkTagsSchema,
    responses: { 200: { description: 'Success', schema: null } },
    errors: [400, 401, 403, 404, 413, 415],
    handler: async ({ env, principal, body, params }) => {
      await service.bulkTagFeatures(getDb(env), principal, params.projectId, body);
      return empty(200);
    },
  }),
  route({
    method: 'POST',
    path: '/api/admin/tags',
    access: authenticated(),
    tag: 'Tags',
    operationId: 'createTag',
    summary: 'Create a tag',
    body: TagSchema,
    responses: { 201: { description: 'Created', schema: TagWithVersionResponse } },
    errors: [400, 401, 409, 413, 415],
    handler: async ({ env, principal, body }) => {
      const answer = await service.createTag(getDb(env), principal, body);
      return json(answer, 201, { location: `tags/${answer.tag.type}/${answer.tag.value}` });
    },
  }),
  route({
    method: 'GET',
    path: '/api/admin/tags/:type/:value',
    access: authenticated(),
    tag: 'Tags',
    operationId: 'getTag',
    summary: 'Get a tag',
    responses: { 200: { description: 'Success', schema: TagWithVersionResponse } },
    errors: [400, 401, 404],
    handler: async ({ env, params }) => json(await service.getTag(getDb(env), params.type, params.value)),
  }),
  route({
    method: 'DELETE',
    path: '/api/admin/tags/:type/:value',
    access: admin(UPDATE_FEATURE),
    tag: 'Tags',
    operationId: 'deleteTag',
    summary: 'Delete a tag and remove it from every flag',
    responses: { 200: { description: 'Success', schema: null } },
    errors: [400, 401, 403],
    handler: async ({ env, principal, params }) => {
      await service.deleteTag(getDb(env), principal, params.type, params.value);
      return empty(200);
    },
  }),
  route({
    method: 'POST',
    path: '/api/admin/tag-types/validate',
    access: authenticated(),
    tag: 'Tags',
    operationId: 'validateTagType',
    summary: 'Check a tag type without creating it',
    body: ValidateTagTypeSchema,
    responses: { 200: { description: 'The tag type could be created', schema: ValidateTagTypeResponse } },
    errors: [400, 401, 409, 413, 415],
    handler: async ({ env, body }) => json(await service.validateTagType(getDb(env), body)),
  }),
  route({
    method: 'PUT',
    path: '/api/admin/tag-types/:name',
    access: admin(UPDATE_TAG_TYPE),
    tag: 'Tags',
    operationId: 'updateTagType',
    summary: "Change a tag type's description, icon or colour",
    body: UpdateTagTypeSchema,
    responses: { 200: { description: 'Success', schema: null } },
    errors: [400, 401, 403, 404, 413, 415],
    handler: async ({ env, principal, body, params }) => {
      await service.updateTagType(getDb(env), principal, params.name, body);
      return empty(200);
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/admin/tag-types/:name',
    access: admin(DELETE_TAG_TYPE),
    tag: 'Tags',
    operationId: 'deleteTagType',
    summary: 'Delete a tag type with its tags',
    responses: { 200: { description: 'Success', schema: null } },
    errors: [400, 401, 403, 404],
    handler: async ({ env, principal, params }) => {
      await service.deleteTagType(getDb(env), principal, params.name);
      return empty(200);
    },
  }),
];
