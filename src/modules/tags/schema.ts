import * as v from 'valibot';
import { text, urlFriendlyName } from '../../http/validation';

export const CreateTagTypeSchema = v.object({
  name: urlFriendlyName(50, 2),
  description: v.optional(v.nullable(text(1000))),
  icon: v.optional(v.nullable(text(255))),
  color: v.optional(v.nullable(text(50))),
});
export type CreateTagTypeInput = v.InferOutput<typeof CreateTagTypeSchema>;

/** Tag values are 2 to 50 characters after trimming, as the seed's limits say. */
export const TagSchema = v.object({
  type: urlFriendlyName(50, 2),
  value: v.pipe(
    text(200),
    v.trim(),
    v.minLength(2, 'must be at least 2 characters long'),
    v.maxLength(50, 'must be at most 50 characters long'),
  ),
});
export type TagInput = v.InferOutput<typeof TagSchema>;

/** What `GET /api/admin/tag-types` answers with status 200. */
export const GetTagTypesResponse = v.object({
  version: v.number(),
  tagTypes: v.array(
    v.object({
      name: v.nullable(v.string()),
      description: v.nullable(v.string()),
      icon: v.nullable(v.string()),
      color: v.nullable(v.string()),
    }),
  ),
});

/** What `POST /api/admin/tag-types` answers with status 201. */
export const CreateTagType201Response = v.object({
  name: v.nullable(v.string()),
  description: v.nullable(v.string()),
  icon: v.nullable(v.string()),
  color: v.nullable(v.string()),
});

/** What `GET /api/admin/tag-types/:name` answers with status 200. */
export const GetTagTypeResponse = v.object({
  version: v.number(),
  tagType: v.object({
    name: v.nullable(v.string()),
    description: v.nullable(v.string()),
    icon: v.nullable(v.string()),
    color: v.nullable(v.string()),
  }),
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

/** What `GET /api/admin/tags` answers with status 200. */
export const GetTagsResponse = v.object({
  version: v.number(),
  tags: v.array(
    v.object({
      type: v.string(),
      value: v.optional(v.string()),
    }),
  ),
});

/** What `GET /api/admin/tags/:type` answers with status 200. */
export const GetTagsByTypeResponse = v.object({
  version: v.number(),
  tags: v.array(
    v.object({
      type: v.string(),
      value: v.optional(v.string()),
    }),
  ),
});
