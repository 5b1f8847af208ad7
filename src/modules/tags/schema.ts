import * as v from 'valibot';

const TagTypeAnswer = v.object({
  name: v.nullable(v.string()),
  description: v.nullable(v.string()),
  icon: v.nullable(v.string()),
  color: v.nullable(v.string()),
});

/** What `GET /api/admin/tag-types` answers with status 200. */
export const GetTagTypesResponse = v.object({
  version: v.number(),
  tagTypes: v.array(TagTypeAnswer),
});

/** What `POST /api/admin/tag-types` answers with status 201. */
export const CreateTagType201Response = TagTypeAnswer;

/** What `GET /api/admin/tag-types/:name` answers with status 200. */
export const GetTagTypeResponse = v.object({
  version: v.number(),
  tagType: TagTypeAnswer,
});

/** What `GET /api/admin/features/:featureName/tags` answers with status 200. */
export const ListTagsResponse = v.object({
  version: v.number(),
  tags: v.array(
    v.object({
      value: v.optional(v.string()),
      type: v.string(),
    }),
  ),
});

/** What `POST /api/admin/features/:featureName/tags` answers with status 201. */
export const AddTag201Response = v.object({
  type: v.string(),
  value: v.optional(v.string()),
});

const TagListAnswer = v.object({
  version: v.number(),
  tags: v.array(
    v.object({
      type: v.string(),
      value: v.optional(v.string()),
    }),
  ),
});

/** What `GET /api/admin/tags` answers with status 200. */
export const GetTagsResponse = TagListAnswer;

/** What `GET /api/admin/tags/:type` answers with status 200. */
export const GetTagsByTypeResponse = TagListAnswer;
