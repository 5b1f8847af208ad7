import * as v from 'valibot';
import { coercedText, urlFriendlyField } from '../../http/validation';

/** Unleash 6.10.1's tag-type colour: `#` and six hex digits, refused in its validator's words. */
const color = v.pipe(v.string(), v.regex(/^#[0-9A-Fa-f]{6}$/, 'must match pattern "^#[0-9A-Fa-f]{6}$"'));

// Numbers and booleans sent as description or icon are stored as strings, as 6.10.1 does.
export const CreateTagTypeSchema = v.object({
  name: urlFriendlyField('name', 50, 2),
  description: v.optional(v.nullable(coercedText(1000))),
  icon: v.optional(v.nullable(coercedText(255))),
  color: v.optional(v.nullable(color)),
});
export type CreateTagTypeInput = v.InferOutput<typeof CreateTagTypeSchema>;

/** Tag values are 2 to 50 characters after trimming, as the seed's limits say. */
export const TagSchema = v.object({
  type: urlFriendlyField('type', 50, 2),
  value: v.pipe(
    coercedText(200),
    v.trim(),
    v.minLength(2, 'must be at least 2 characters long'),
    v.maxLength(50, 'must be at most 50 characters long'),
  ),
});
export type TagInput = v.InferOutput<typeof TagSchema>;

const MAX_TAGS_PER_CALL = 50;
const tagList = v.pipe(v.array(TagSchema), v.maxLength(MAX_TAGS_PER_CALL, `must have at most ${MAX_TAGS_PER_CALL} tags`));

/** Tags to add to and remove from a flag, as the UI's tag dialog sends them. */
export const UpdateTagsSchema = v.strictObject({ addedTags: tagList, removedTags: tagList });
export type UpdateTagsInput = v.InferOutput<typeof UpdateTagsSchema>;

export const BulkTagsSchema = v.strictObject({
  features: v.pipe(v.array(v.pipe(v.string(), v.minLength(1), v.maxLength(255))), v.maxLength(1000, 'must have at most 1000 flags')),
  tags: UpdateTagsSchema,
});
export type BulkTagsInput = v.InferOutput<typeof BulkTagsSchema>;

export const ValidateTagTypeSchema = v.strictObject({
  name: urlFriendlyField('name', 50, 2),
  description: v.optional(coercedText(1000)),
  icon: v.optional(v.nullable(coercedText(255))),
  color: v.optional(v.nullable(color)),
});
export type ValidateTagTypeInput = v.InferOutput<typeof ValidateTagTypeSchema>;

export const UpdateTagTypeSchema = v.object({
  description: v.optional(coercedText(1000)),
  icon: v.optional(v.nullable(coercedText(255))),
  color: v.optional(v.nullable(color)),
});
export type UpdateTagTypeInput = v.InferOutput<typeof UpdateTagTypeSchema>;

const tagAnswer = v.object({ type: v.string(), value: v.string() });

/** What `POST /api/admin/tags` and `GET /api/admin/tags/:type/:value` answer. */
export const TagWithVersionResponse = v.object({ version: v.number(), tag: tagAnswer });

/** What `POST /api/admin/tag-types/validate` answers with status 200. */
export const ValidateTagTypeResponse = v.object({
  valid: v.boolean(),
  tagType: v.object({
    name: v.string(),
    description: v.optional(v.string()),
    icon: v.optional(v.nullable(v.string())),
    color: v.optional(v.nullable(v.string())),
  }),
});

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
      type: v.string(),
      value: v.string(),
      color: v.nullable(v.string()),
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
